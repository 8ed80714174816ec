"""Tensor snapshots while another thread re-describes the tensor.

aclInitTensor on a tensor while another thread ran Matmul's phase 1 made phase 1 validate one view and
the executor take another (the worker then faulted in the kernel). A snapshot (pyaclnn_stub_tensor_get)
is now one whole description, never a mix of two (on main a reader saw hundreds of thousands of torn
ones), and pyaclnn_stub_executor_new_snapshots builds the executor from the snapshots phase 1 took, so
the kernel runs exactly what phase 1 validated (tests/c/tensor_snapshot.c).
"""
from __future__ import annotations

import re
import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, REPO_ROOT / "tests" / "c" / "tensor_snapshot.c")


def run(exe, *args: str) -> str:
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120, env=subprocess_env())
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_snapshot_is_never_a_mix_of_two_descriptions(driver):
    out = run(driver, "race", "2000000")
    torn, total = map(int, re.search(r"^torn (\d+) of (\d+)$", out, re.M).groups())
    assert torn == 0 and total >= 2000000, out


def test_an_executor_built_from_snapshots_runs_what_phase_1_validated(driver):
    out = run(driver, "phase1", "20000")
    # "handles" counts the launches of executors built from the handle, which reads the tensor again:
    # those may differ from what phase 1 validated (that is why operators move to the snapshots)
    snapshots, _, torn = map(int, re.search(r"^differ snapshots (\d+) handles (\d+) torn (\d+)$", out, re.M).groups())
    assert snapshots == 0 and torn == 0, out


def test_executor_from_snapshots_absent_tensors_repointing_and_refusals(driver):
    assert run(driver, "build").strip() == "build ok"


@pytest.fixture(scope="module")
def op_race(tmp_path_factory):
    return build_c_driver(tmp_path_factory, REPO_ROOT / "tests" / "c" / "op_redescribe_race.c")


def test_an_operator_launches_what_its_phase_1_validated_while_the_tensor_is_redescribed(op_race):
    # Matmul's self flips between a valid [4, 8] view and a [64, 8] view past its block: every accepted
    # phase 1 must launch the [4, 8] one and give self @ mat2 (the executor takes phase 1's snapshots).
    out = run(op_race, "100")
    accepted = int(re.fullmatch(r"ok (\d+)\n", out).group(1))
    assert accepted > 30      # (most are; with the old handle-built executors a launch failed within a few)
