"""The support table (pyaclnn/ops/_fidelity.py, `python -m pyaclnn info --ops`) covers every operator
the emulator's libopapi exports, with a class (a), (b), (c) or (s) (statistical: random numbers)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from pyaclnn import _loader
from pyaclnn.ops._fidelity import FIDELITY, fidelity

import helpers


def _exported_operators() -> set[str]:
    lib = os.path.join(_loader.stub_library_dir(), "libopapi.so")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return {n for n in names if re.fullmatch(r"aclnn[A-Z]\w*", n) and not n.endswith("GetWorkspaceSize")
            and n + "GetWorkspaceSize" in names}


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_every_exported_operator_has_a_fidelity_class():
    exported = _exported_operators()
    assert exported, "no operators found in libopapi"
    missing = sorted(op for op in exported if fidelity(op) is None)
    assert missing == [], "operators without an entry in pyaclnn/ops/_fidelity.py: " + ", ".join(missing)


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_the_table_names_only_exported_operators():
    assert sorted(set(FIDELITY) - _exported_operators()) == []


def test_classes_are_a_b_c_s_or_v_with_a_note():
    assert all(cls in ("a", "b", "c", "s", "v") and note for cls, note in FIDELITY.values())
    assert fidelity("Exp")[0] == "c" and fidelity("aclnnEqTensor")[0] == "a" and fidelity("NoSuchOp") is None


def test_statistical_class_is_only_for_random_operators_and_names_its_test():
    # (s) says "the values are not the NPU's": only operators whose output is random may have it, and
    # the note names the test file that checks their distributions.
    stat = sorted(op for op, (cls, _) in FIDELITY.items() if cls == "s")
    assert stat == ["aclnnDropoutGenMaskV2", "aclnnDropoutGenMaskV2Tensor", "aclnnDropoutV3", "aclnnInplaceBernoulli",
                    "aclnnInplaceBernoulliTensor", "aclnnInplaceNormal", "aclnnInplaceNormalTensor", "aclnnInplaceRandom",
                    "aclnnInplaceRandomWithoutFromTo", "aclnnInplaceUniform", "aclnnInplaceUniformTensor",
                    "aclnnMultinomial", "aclnnRandperm"]
    assert all(re.search(r"tests/test_random(_more|_tensor)?\.py", FIDELITY[op][1]) for op in stat)


def test_no_operator_is_validation_only():
    # (v) says "no computation". Every exported operator now computes on some path: the last one of class (v),
    # GroupedMatmulFinalizeRoutingV2, runs its Atlas A2 A8W4 path (class c). An operator that only checks would
    # need a note saying what it refuses (161002) and naming the test of its checks.
    v = sorted(op for op, (cls, _) in FIDELITY.items() if cls == "v")
    assert v == [], {op: FIDELITY[op][1] for op in v}
    assert FIDELITY["aclnnGroupedMatmulFinalizeRoutingV2"][0] == "c"


def test_info_ops_prints_the_table():
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "info", "--ops"], capture_output=True, text=True,
                          env=helpers.subprocess_env({}), timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1] for line in proc.stdout.splitlines()[2:]}
    assert rows["aclnnSqrt"] == "(a)" and rows["aclnnSilu"] == "(c)" and rows["aclnnAmpUpdateScale"] == "(b)"
    assert len(rows) == len(FIDELITY)
