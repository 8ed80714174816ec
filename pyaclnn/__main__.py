"""Command line: ``python -m pyaclnn info [--json | --ops]``, ``demo``, ``exec -- CMD ...`` and ``suite op-plugin PATH``.

``info`` reports which libraries this process loaded (backend, toolkit root, paths), the SoC, the
device count, the ACL interface version and which of our operators the libraries export.
``demo`` runs the three seed operators on sample inputs through :mod:`pyaclnn.capi`, then one operator of
every other family through :mod:`pyaclnn.ops` (:mod:`pyaclnn._demo_families`), and prints the results; it
needs nothing but the bundled stub.  A seed demo is a function in :data:`DEMOS` (it receives a
:class:`DemoSession` and prints its lines); a family's is an entry of ``_demo_families.FAMILIES``.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys

import numpy as np

from . import __version__, capi
from .errors import AclError, PyaclnnError, check, make_error

# Operators the project emulates (their phase-1 entry points), for `info`.
OPERATORS = ("aclnnAmpUpdateScale", "aclnnAddRmsNormDynamicQuant", "aclnnAddRmsNormDynamicQuantV2",
             "aclnnGroupedDynamicMxQuant", "aclnnGroupedDynamicMxQuantV2")


# ------------------------------------------------------------------------------------------------
# info
# ------------------------------------------------------------------------------------------------

def _acl_init() -> tuple[bool, str | None]:
    """aclInit(NULL); returns (we initialised it, error text)."""
    try:
        status = capi.aclInit(None)
    except PyaclnnError as exc:
        return False, str(exc)
    if status == capi.ACL_SUCCESS:
        return True, None
    if status == capi.ACL_ERROR_REPEAT_INITIALIZE:
        return False, None
    return False, str(make_error(status, "aclInit"))      # with the vendor message


def collect_info() -> dict:
    from ._loader import backend
    b = backend()
    info = {"pyaclnn_version": __version__, **b.describe()}
    owned, init_error = _acl_init()
    info["init_error"] = init_error
    try:
        soc = capi.aclrtGetSocName()
        info["soc"] = soc.decode() if soc else None
    except PyaclnnError as exc:
        info["soc"] = None
        info["soc_error"] = str(exc)
    count = ctypes.c_uint32()
    try:
        status = capi.aclrtGetDeviceCount(ctypes.byref(count))
        info["device_count"] = count.value if status == 0 else None
    except PyaclnnError:
        info["device_count"] = None
    major, minor, patch = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
    try:
        status = capi.aclrtGetVersion(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
        info["acl_version"] = f"{major.value}.{minor.value}.{patch.value}" if status == 0 else None
    except PyaclnnError:
        info["acl_version"] = None
    info["operators"] = {op: b.find(op + "GetWorkspaceSize") for op in OPERATORS}
    if b.name == "stub":
        from . import _catalog
        ops = _catalog.load()["operators"]
        info["emulated"] = {"operators": len(ops), "families": len({op["family"] for op in ops.values()})}
        info["matmul_engine"] = _matmul_engine(b)
    from ._stubinfo import live_counts
    info["live_objects"] = live_counts()     # None on a real toolkit
    from .capi import _accel
    from .ops import _native
    info["accelerators"] = {_native.MODULE: _native.status(), _accel.MODULE: _accel.status()}
    if owned:
        capi.aclFinalize()
    info["torch_npu"] = _torch_npu_info()
    return info


def _matmul_engine(b) -> str | None:
    """The emulator's matmul engine in use: OpenBLAS (the default) or the portable loop, and why."""
    from .errors import MissingSymbolError
    try:
        fn = b.symbol("pyaclnn_stub_matmul_engine")
    except MissingSymbolError:
        return None
    fn.argtypes, fn.restype = [], ctypes.c_char_p
    return fn().decode()


def _torch_npu_info() -> dict:
    """The emulated toolkit tree (created on first use) and whether torch_npu would load on it."""
    from ._toolkit import toolkit_root
    try:
        root = toolkit_root()
    except PyaclnnError as exc:
        return {"toolkit_tree": None, "error": str(exc), "would_load": False}
    from ._torch_npu_check import torch_npu_status
    return {"toolkit_tree": str(root), **torch_npu_status(root / "lib64")}


def print_info(info: dict) -> None:
    rows = [("pyaclnn", info["pyaclnn_version"]), ("backend", info["backend"]),
            ("toolkit root", info["toolkit_root"] or "-"), ("library dir", info["libdir"])]
    rows += [("libraries" if i == 0 else "", p) for i, p in enumerate(info["libraries"])]
    rows += [("skipped", f"{s['path']}: {s['reason']}") for s in info["skipped"]]
    if info.get("fallback_reason"):
        rows.append(("fallback", info["fallback_reason"]))
    if info.get("init_error"):
        rows.append(("aclInit", info["init_error"]))
    rows += [("SoC", info.get("soc") or "?"), ("devices", info.get("device_count")),
             ("ACL version", info.get("acl_version") or "?")]
    emulated = info.get("emulated")
    if emulated:
        rows.append(("operators", f"{emulated['operators']} emulated, in {emulated['families']} families "
                                  "(python -m pyaclnn info --ops lists each with its fidelity class)"))
    if info.get("matmul_engine"):
        rows.append(("matmul", info["matmul_engine"]))
    for i, (op, path) in enumerate(info["operators"].items()):
        label = "seed ops" if emulated else "operators"
        rows.append((label if i == 0 else "", f"{op:34s} {path or 'not available'}"))
    if info.get("live_objects") is not None:
        alive = {k: v for k, v in info["live_objects"].items() if v}
        rows.append(("live objects", ", ".join(f"{k} {v}" for k, v in alive.items()) or "none"))
    for i, (name, st) in enumerate(info.get("accelerators", {}).items()):
        state = f"active ({st['path']})" if st["active"] else f"not active: {st['why']}"
        rows.append(("accelerators" if i == 0 else "", f"{name:18s} {state}"))
    rows += _torch_npu_rows(info.get("torch_npu"))
    for key, value in rows:
        print(f"{key:13s} {value}")


def _torch_npu_rows(t: dict | None) -> list[tuple[str, str]]:
    if not t:
        return []
    rows = [("emulated CANN", t.get("toolkit_tree") or t.get("error"))]
    if t.get("torch_npu") is None:
        return rows + [("torch_npu", "; ".join(t.get("reasons", [])) or "not checked")]
    verdict = ("would load on the emulator (PYACLNN_EMULATE=1 CMD, pytest --aclnn-emulator, python -m pyaclnn "
               "exec -- CMD, or pyaclnn.preload_stub())" if t["would_load"] else "would NOT load: " + "; ".join(t["reasons"]))
    rows.append(("torch_npu", f"{t['torch_npu']} with torch {t['torch']}: {verdict}"))
    import os
    from ._emulate import requested
    if requested():
        rows.append(("", "PYACLNN_EMULATE is set: every Python process here starts with the emulator in place"))
    elif not os.environ.get("ASCEND_HOME_PATH"):
        rows.append(("", "no CANN here (ASCEND_HOME_PATH unset): `import torch` autoloads torch_npu and fails without "
                         "CANN's libraries; set PYACLNN_EMULATE=1 to run it on the emulator"))
    if t.get("cann_libraries"):
        rows.append(("", f"links {', '.join(t['cann_libraries'])}; binds {t['cann_symbols']} CANN symbols"))
    return rows


# ------------------------------------------------------------------------------------------------
# demo
# ------------------------------------------------------------------------------------------------

class DemoSession:
    """Device buffers and aclTensors for one demo; everything is released by :meth:`close`."""

    def __init__(self, stream: int):
        self.stream = stream
        self._buffers: list[int] = []
        self._tensors: list[int] = []

    def tensor(self, values, acl_dtype: int) -> tuple[int, int]:
        """Copy ``values`` to the device and describe them (ND, contiguous); return (tensor, ptr)."""
        arr = np.ascontiguousarray(values)
        ptr = ctypes.c_void_p()
        check(capi.aclrtMalloc(ctypes.byref(ptr), max(arr.nbytes, 1),
                               capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
        self._buffers.append(ptr.value)
        check(capi.aclrtMemcpy(ptr, arr.nbytes, arr.ctypes.data, arr.nbytes,
                               capi.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
        shape = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
        strides = (ctypes.c_int64 * max(arr.ndim, 1))(*[s // arr.itemsize for s in arr.strides])
        handle = capi.aclCreateTensor(shape, arr.ndim, acl_dtype, strides, 0, capi.ACL_FORMAT_ND,
                                      shape, arr.ndim, ptr)
        if not handle:
            raise AclError(capi.ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor")
        self._tensors.append(handle)
        return handle, ptr.value

    def read(self, ptr: int, dtype, count: int) -> np.ndarray:
        out = np.empty(count, dtype=dtype)
        check(capi.aclrtMemcpy(out.ctypes.data, out.nbytes, ptr, out.nbytes,
                               capi.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
        return out

    def launch(self, op: str, *args) -> None:
        """Run both phases of ``op`` on the session's stream and wait for it."""
        workspace_size, executor = ctypes.c_uint64(), ctypes.c_void_p()
        phase1 = op + "GetWorkspaceSize"
        check(getattr(capi, phase1)(*args, ctypes.byref(workspace_size), ctypes.byref(executor)),
              phase1)
        workspace = ctypes.c_void_p()
        if workspace_size.value:
            check(capi.aclrtMalloc(ctypes.byref(workspace), workspace_size.value,
                                   capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
            self._buffers.append(workspace.value)
        check(getattr(capi, op)(workspace, workspace_size, executor, self.stream), op)
        check(capi.aclrtSynchronizeStream(self.stream), "aclrtSynchronizeStream")

    def close(self) -> None:
        for t in self._tensors:
            capi.aclDestroyTensor(t)
        for p in self._buffers:
            capi.aclrtFree(p)
        self._tensors, self._buffers = [], []


def demo_amp_update_scale(s: DemoSession) -> None:
    """aclnnAmpUpdateScale: the vendor sample's inputs, then the two variants its docs describe."""
    growth_factor, backoff_factor, growth_interval = 2.0, 0.5, 1000
    cases = [("sample", 65536.0, 900, 0.0),        # 901 != 1000: unchanged scale, tracker 901
             ("growth", 65536.0, 999, 0.0),        # 999 + 1 == 1000: scale x 2.0, tracker 0
             ("found_inf", 65536.0, 900, 1.0)]     # foundInf != 0: scale x 0.5, tracker 0
    for label, scale, tracker, found_inf in cases:
        cs, _ = s.tensor(np.array([scale], np.float32), capi.ACL_FLOAT)
        gt, _ = s.tensor(np.array([tracker], np.int32), capi.ACL_INT32)
        fi, _ = s.tensor(np.array([found_inf], np.float32), capi.ACL_FLOAT)
        out_scale, out_scale_ptr = s.tensor(np.zeros(1, np.float32), capi.ACL_FLOAT)
        out_tracker, out_tracker_ptr = s.tensor(np.zeros(1, np.int32), capi.ACL_INT32)
        s.launch("aclnnAmpUpdateScale", cs, gt, fi, growth_factor, backoff_factor, growth_interval,
                 out_scale, out_tracker)
        new_scale = s.read(out_scale_ptr, np.float32, 1)[0]
        new_tracker = s.read(out_tracker_ptr, np.int32, 1)[0]
        print(f"  {label:10s} currentScale {scale:g}, growthTracker {tracker}, foundInf {found_inf:g}"
              f" -> updatedScale {new_scale:g}, updatedGrowthTracker {new_tracker}")


def _add_rms_norm_inputs(s: DemoSession) -> list[int]:
    """The vendor sample's inputs: x1 = x2 = 0.5 (fp16 [2, 8]), gamma = smooth1 = smooth2 = 1.5."""
    half = np.full((2, 8), 0.5, np.float16)
    vec = np.full(8, 1.5, np.float16)
    return [s.tensor(a, capi.ACL_FLOAT16)[0] for a in (half, half, vec, vec, vec)]


def _add_rms_norm_outputs(s: DemoSession) -> tuple[list[int], dict[str, int]]:
    specs = [("y1", np.zeros((2, 8), np.int8), capi.ACL_INT8), ("y2", np.zeros((2, 8), np.int8), capi.ACL_INT8),
             ("xOut", np.zeros((2, 8), np.float16), capi.ACL_FLOAT16),
             ("scale1", np.zeros(2, np.float32), capi.ACL_FLOAT), ("scale2", np.zeros(2, np.float32), capi.ACL_FLOAT)]
    made = [s.tensor(a, dtype) for _, a, dtype in specs]
    return [t for t, _ in made], {name: ptr for (name, _, _), (_, ptr) in zip(specs, made)}


def _print_add_rms_norm(s: DemoSession, label: str, ptrs: dict[str, int]) -> None:
    y1, y2 = s.read(ptrs["y1"], np.int8, 16), s.read(ptrs["y2"], np.int8, 16)
    x_out = s.read(ptrs["xOut"], np.float16, 16)
    scale1, scale2 = s.read(ptrs["scale1"], np.float32, 2), s.read(ptrs["scale2"], np.float32, 2)
    print(f"  {label:3s} y1 {y1[:8].tolist()} ... y2 {y2[:8].tolist()} ... xOut {float(x_out[0]):g} ..."
          f" scale1 {scale1.tolist()} scale2 {scale2.tolist()}")


def demo_add_rms_norm_dynamic_quant(s: DemoSession) -> None:
    """aclnnAddRmsNormDynamicQuant (V1) and V2 (beta = 1.5) on the vendor sample's inputs, int8 out."""
    epsilon = 1e-6
    outs, ptrs = _add_rms_norm_outputs(s)
    s.launch("aclnnAddRmsNormDynamicQuant", *_add_rms_norm_inputs(s), epsilon, *outs)
    _print_add_rms_norm(s, "V1", ptrs)
    x1, x2, gamma, smooth1, smooth2 = _add_rms_norm_inputs(s)
    beta, _ = s.tensor(np.full(8, 1.5, np.float16), capi.ACL_FLOAT16)
    outs, ptrs = _add_rms_norm_outputs(s)
    s.launch("aclnnAddRmsNormDynamicQuantV2", x1, x2, gamma, smooth1, smooth2, beta, epsilon, None, *outs)
    _print_add_rms_norm(s, "V2", ptrs)


def demo_grouped_dynamic_mx_quant(s: DemoSession) -> None:
    """aclnnGroupedDynamicMxQuant (V1) and V2: the published example, bf16 -> FLOAT8_E4M3FN."""
    from ml_dtypes import bfloat16
    soc = (capi.aclrtGetSocName() or b"").decode()
    if not soc.startswith("Ascend950"):
        print(f"  not run: the NPU supports it only on Ascend 950 and refuses it on {soc} (as the emulator does)")
        return
    column = np.array([0, 8, 64, 512, 0, 8, 64, 512], bfloat16).reshape(8, 1)
    for version in ("", "V2"):
        x, _ = s.tensor(column.view(np.uint16), capi.ACL_BF16)
        group_index, _ = s.tensor(np.array([4, 8], np.int32), capi.ACL_INT32)
        y, y_ptr = s.tensor(np.zeros((8, 1), np.uint8), capi.ACL_FLOAT8_E4M3FN)
        mxscale, mxscale_ptr = s.tensor(np.zeros((2, 1, 2), np.uint8), capi.ACL_FLOAT8_E8M0)
        attrs = (b"rint", capi.ACL_FLOAT8_E4M3FN, 32) + ((0, 0.0) if version else ())
        s.launch(f"aclnnGroupedDynamicMxQuant{version}", x, group_index, *attrs, y, mxscale)
        y_bytes = s.read(y_ptr, np.uint8, 8).tolist()
        scale_bytes = s.read(mxscale_ptr, np.uint8, 4).reshape(2, 1, 2).tolist()
        print(f"  {version or 'V1':3s} x {column.ravel().astype(np.float32).tolist()} groupIndex [4, 8]"
              f" -> y bytes {y_bytes}, mxscale {scale_bytes}")


# (title, function): the seed operators, each with its own family, in full.
DEMOS = [("aclnnAmpUpdateScale", demo_amp_update_scale),
         ("aclnnAddRmsNormDynamicQuant", demo_add_rms_norm_dynamic_quant),
         ("aclnnGroupedDynamicMxQuant", demo_grouped_dynamic_mx_quant)]


def run_demos(selected: list[str] | None = None) -> int:
    from . import _catalog
    from ._demo_families import FAMILIES
    families = sorted({op["family"] for op in _catalog.load()["operators"].values()})
    check_init = capi.aclInit(None)
    if check_init not in (capi.ACL_SUCCESS, capi.ACL_ERROR_REPEAT_INITIALIZE):
        check(check_init, "aclInit")
    check(capi.aclrtSetDevice(0), "aclrtSetDevice")
    stream = ctypes.c_void_p()
    check(capi.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")
    failures = 0

    def report(exc: Exception) -> None:
        if isinstance(exc, BrokenPipeError):    # the output's reader went away: not a demo failure
            raise exc
        nonlocal failures
        failures += 1
        text = str(exc) if isinstance(exc, PyaclnnError) else f"{type(exc).__name__}: {exc}"
        print("  FAILED: " + text.replace("\n", "\n  "))

    try:
        if not selected:
            print(f"pyaclnn demo: the 3 seed operators in full, then one operator of each of the other "
                  f"{len(FAMILIES)} families ({len(_catalog.load()['operators'])} operators in "
                  f"{len(families)} families: python -m pyaclnn info --ops)")
        for title, fn in DEMOS:
            if selected and title not in selected:
                continue
            print(title)
            session = DemoSession(stream.value)
            try:
                fn(session)
            except Exception as exc:    # noqa: BLE001 -- report every failure, run the other demos
                report(exc)
            finally:
                session.close()
        for family, fn in FAMILIES.items():
            if selected and family not in selected:
                continue
            try:
                print(f"{family:<12} {fn()}")
            except Exception as exc:    # noqa: BLE001
                print(family)
                report(exc)
    finally:
        capi.aclrtDestroyStream(stream)
        capi.aclrtResetDevice(0)
        capi.aclFinalize()
    if failures:
        print(f"pyaclnn demo: {failures} of the operator demos failed", file=sys.stderr)
    return 1 if failures else 0


# ------------------------------------------------------------------------------------------------
# exec
# ------------------------------------------------------------------------------------------------

def exec_command(argv: list[str]) -> int:
    """``exec [--] CMD ...``: replace this process by CMD with the emulated toolkit in place of CANN."""
    import os
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m pyaclnn exec -- CMD [ARG ...]\n\nRuns CMD with LD_LIBRARY_PATH and the "
              "ASCEND_* variables pointing at pyaclnn's emulated CANN toolkit (CPU emulator), so that\n"
              "torch_npu and other CANN programs run without an NPU. CMD's exit status is passed through.")
        return 0 if argv else 2
    from ._toolkit import environment, toolkit_root
    try:
        env = environment(toolkit_root())
    except PyaclnnError as exc:
        print(f"pyaclnn exec: {exc}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        print(f"pyaclnn exec: cannot run {argv[0]!r}: {exc}", file=sys.stderr)
        return 127


# ------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyaclnn", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_info = sub.add_parser("info", help="backend, libraries, SoC, devices, versions")
    p_info.add_argument("--json", action="store_true", help="print one JSON object")
    p_info.add_argument("--ops", nargs="*", metavar="OP",
                        help="the emulated operators and their fidelity class; with names, each one in full "
                             "(prototype, family, vendor source, dtypes per SoC, the checks of phase 1)")
    p_info.add_argument("--markdown", action="store_true",
                        help="with --ops: the support table of docs/torch_npu.md, per family, as Markdown")
    p_demo = sub.add_parser("demo", help="run the three seed operators (AmpUpdateScale, AddRmsNormDynamicQuant, "
                                         "GroupedDynamicMxQuant) and one operator of every other family on sample "
                                         "inputs; info --ops lists all")
    p_demo.add_argument("ops", nargs="*", help="only these (a seed operator such as aclnnAmpUpdateScale, or a "
                                               "family such as math)")
    sub.add_parser("suite", add_help=False,
                   help="run a peer's test suite on the emulator (python -m pyaclnn suite op-plugin PATH)")
    sub.add_parser("exec", add_help=False,
                   help="run a command on the emulator in place of CANN (python -m pyaclnn exec -- CMD ...)")
    sub.add_parser("gen-signatures", add_help=False,
                   help="parse a toolkit's include/aclnnop headers into a signature registry "
                        "(python -m pyaclnn gen-signatures --help)")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "exec":
        return exec_command(argv[1:])
    if argv and argv[0] == "suite":
        from .suite.cli import main as suite_main             # its own argument parser
        return suite_main(argv[1:])
    if argv and argv[0] == "gen-signatures":
        from .signatures import main as gen_signatures_main   # its own argument parser
        return gen_signatures_main(argv[1:])
    args = parser.parse_args(argv)
    try:
        if args.command == "info" and args.ops is not None:
            from .ops._fidelity import describe, format_markdown, format_table
            if not args.ops:
                print(format_markdown() if args.markdown else format_table())
                return 0
            try:
                print("\n\n".join(describe(op) for op in args.ops))
            except KeyError as exc:
                print(f"pyaclnn: {exc.args[0]}", file=sys.stderr)
                return 2
            return 0
        if args.command == "info":
            info = collect_info()
            if args.json:
                print(json.dumps(info, indent=2))
            else:
                print_info(info)
            if info.get("init_error"):          # e.g. a bad PYACLNN_STUB_SOC: a broken setup
                print(f"pyaclnn: {info['init_error']}", file=sys.stderr)
                return 2
            return 0
        return run_demos(args.ops)
    except PyaclnnError as exc:
        print(f"pyaclnn: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`python -m pyaclnn info | head`): stop quietly, as other tools do; the
        # interpreter's final flush would raise again, so stdout goes to /dev/null first
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141                              # 128 + SIGPIPE, a shell's status for it


if __name__ == "__main__":
    sys.exit(main())
