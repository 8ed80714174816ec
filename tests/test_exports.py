"""The emulator's libraries export CANN's public symbols and clearly prefixed internals, nothing else.

A stray export (a helper without `static`, a compiler-made ifunc resolver) can interpose on symbols of
the user's program or of another library loaded in the same process.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pyaclnn import _loader

# Msprof* and rt[A-Z]*: CANN public entry points of libprofapi / libruntime that torch_npu binds; the
# compatibility layer folds them into libascendcl (docs/torch_npu.md).
# The executor-cache hooks op-plugin binds from libnnopbase (opbase's extern "C" names; docs/torch_npu.md).
PUBLIC = re.compile(r"^(acl|Acl|pyaclnn_stub_|Msprof|rt[A-Z]|(CanUsePTACache|InitPTACacheThreadLocal|"
                    r"UnInitPTACacheThreadLocal|AddTensorAddrToCachedList|SetPTAHashKey|SetPTACacheHashKey|"
                    r"PTAGetExecCache|PTAFindExecCache)$)")
LIBRARIES = ("libascendcl.so", "libnnopbase.so", "libopapi.so", "libacl_op_compiler.so")


def _defined_dynamic_symbols(path: Path) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], check=True, capture_output=True,
                         text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
@pytest.mark.parametrize("name", LIBRARIES)
def test_only_public_and_prefixed_symbols_are_exported(name):
    symbols = _defined_dynamic_symbols(Path(_loader.stub_library_dir()) / name)
    assert symbols, f"{name} exports nothing?"
    stray = [s for s in symbols if not PUBLIC.match(s)]
    assert stray == [], f"{name} exports internal symbols: {stray}"


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_each_family_lives_in_its_cann_library():
    lib = Path(_loader.stub_library_dir())
    runtime = set(_defined_dynamic_symbols(lib / "libascendcl.so"))
    meta = set(_defined_dynamic_symbols(lib / "libnnopbase.so"))
    ops = set(_defined_dynamic_symbols(lib / "libopapi.so"))
    assert {"aclInit", "aclrtMalloc", "aclGetRecentErrMsg", "aclrtGetSocName"} <= runtime
    assert {"aclCreateTensor", "aclDestroyAclOpExecutor", "aclnnInit", "aclSetInputTensorAddr"} <= meta
    assert {"PTAGetExecCache", "PTAFindExecCache", "AddTensorAddrToCachedList"} <= meta   # opbase's place
    assert {"aclnnAmpUpdateScaleGetWorkspaceSize", "aclnnAddRmsNormDynamicQuantV2",
            "aclnnGroupedDynamicMxQuantV2GetWorkspaceSize"} <= ops
    assert not {s for s in ops if s.startswith("aclrt") or s.startswith("aclCreate")}
