"""Would torch_npu load on the emulator here? A static check, without importing torch or torch_npu.

* the ``torch`` and ``torch-npu`` distributions are installed and form a pair (same release);
* every NEEDED entry of torch_npu's ``libtorch_npu.so`` and ``libtensorpipe.so`` is found: in the
  emulated toolkit's lib64/, next to the library, in torch's lib/, or on the system;
* every CANN C symbol they bind at load time (``BIND_NOW``) is exported by the emulator's libraries.
"""
from __future__ import annotations

import ctypes.util
import importlib.metadata
import importlib.util
import os
import re
from pathlib import Path

from ._elf import dynamic_info

__all__ = ["PINNED", "torch_npu_status"]

PINNED = "2.13.0"      # the pair measured to work: torch==2.13.0 (CPU build) + torch-npu==2.13.0
_CANN_SYMBOL = re.compile(r"^(acl|rt[A-Z]|Msprof|Hccl|hccl|tdt|prof)")
_LIBS = ("lib/libtorch_npu.so", "lib/libtensorpipe.so")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version: str) -> str:
    return version.split("+")[0]


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def cuda_build_problem() -> str | None:
    """Why the installed torch cannot host torch_npu because it is a CUDA build, or None. Measured: torch_npu
    then aborts the process at load ("Duplicated key 'pinned_reserve_segment_size_mb' found in
    device-specific configuration parser hook registration"), on the emulator as on CANN. (The package index
    serves torch 2.13.0 as a CUDA build; on this project's machines only Python 3.11 has its CPU build.)"""
    torch_dir = _package_dir("torch")
    if torch_dir is None or not (torch_dir / "lib" / "libc10_cuda.so").is_file():
        return None
    return (f"torch {_version('torch')} is a CUDA build (torch/lib/libc10_cuda.so), whose allocator settings "
            "clash with torch_npu's: the process aborts when torch_npu loads; install torch's CPU build "
            "(+cpu, e.g. from https://download.pytorch.org/whl/cpu)")


def pair_problem() -> str | None:
    """Why torch + torch-npu as installed are not the pair that runs on the emulator, or None."""
    torch_v, npu_v = _version("torch"), _version("torch-npu")
    if torch_v is None or npu_v is None:
        return f"needs torch=={PINNED} and torch-npu=={PINNED} (pip install torch=={PINNED} torch-npu=={PINNED})"
    if (torch_v.split("+")[0], npu_v) != (PINNED, PINNED):
        return f"needs the pinned pair torch/torch-npu {PINNED}; found {torch_v}/{npu_v}"
    return cuda_build_problem()


def torch_npu_status(toolkit_lib64: Path) -> dict:
    """A JSON-ready verdict: ``would_load`` (bool) and ``reasons`` (empty when it would)."""
    out: dict = {"torch": _version("torch"), "torch_npu": _version("torch-npu"), "reasons": []}
    reasons = out["reasons"]
    if out["torch_npu"] is None or out["torch"] is None:
        reasons.append("not installed: pip install torch==%s torch-npu==%s" % (PINNED, PINNED))
        out["would_load"] = False
        return out
    if _release(out["torch"]) != _release(out["torch_npu"]):
        reasons.append(f"torch {out['torch']} and torch-npu {out['torch_npu']} are not a pair "
                       f"(torch-npu X needs torch X; the measured pair is {PINNED})")
    npu_dir, torch_dir = _package_dir("torch_npu"), _package_dir("torch")
    cuda = cuda_build_problem()
    if cuda:
        reasons.append(cuda)
    ours = {n: dynamic_info(str(toolkit_lib64 / n)).defined
            for n in os.listdir(toolkit_lib64) if n.endswith(".so") and (toolkit_lib64 / n).exists()}
    exported = set().union(*ours.values()) if ours else set()
    search = [toolkit_lib64] + ([torch_dir / "lib"] if torch_dir else [])
    from ._preload import loaded_libraries
    in_process = loaded_libraries()      # libc, ld-linux ... are mapped into every process
    needed_cann, bound = set(), set()
    for rel in _LIBS:
        lib = npu_dir / rel if npu_dir else None
        if lib is None or not lib.is_file():
            reasons.append(f"torch_npu/{rel} not found")
            continue
        info = dynamic_info(str(lib))
        for name in info.needed:
            if name in ours:
                needed_cann.add(name)
            elif name not in in_process and not any((d / name).exists() for d in search + [lib.parent]):
                stem = re.sub(r"^lib|\.so.*$", "", name)
                if ctypes.util.find_library(stem) is None:
                    reasons.append(f"{lib.name} needs {name}, which is nowhere to be found")
        bound |= {s for s in info.undefined if _CANN_SYMBOL.match(s)}
    missing = sorted(bound - exported)
    if missing:
        reasons.append(f"{len(missing)} CANN symbols bound at load time are not exported by the emulator: "
                       + ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else ""))
    out.update(cann_libraries=sorted(needed_cann), cann_symbols=len(bound), missing_symbols=missing,
               would_load=not reasons)
    return out
