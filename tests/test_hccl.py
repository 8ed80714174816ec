"""The emulated libhccl under torch.distributed: 2 ranks with backend "hccl" on npu, each compared in the same
process with backend "gloo" on cpu (all-reduce for every reduce op and fp32/fp16/bf16/int32/int8, broadcast and
all-gather of each dtype, barrier, stream order), DistributedDataParallel against one process, then one rank dies and the other's next all-reduce must fail with HCCL's code, not hang.
One process imports torch_npu and forks the ranks (tests/_hccl_rank.py), for the whole file; docs/hccl.md."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import helpers
from _math_ops import torch_npu_reason

RANK = Path(__file__).with_name("_hccl_rank.py")
TIMEOUT = 120  # seconds for the pair; a hang fails the test instead of the run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ranks():
    reason = torch_npu_reason()
    if reason is not None:
        pytest.skip(reason)
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("torch_npu is not run under the ASan pass")
    env = helpers.subprocess_env({"TORCH_NPU_WARNING_DISABLE": "1", "HCCL_TEST_KILL": "1",
                                  "HCCL_CONNECT_TIMEOUT": "60", "HCCL_EXEC_TIMEOUT": "60",
                                  "HCCL_TEST_RANK_TIMEOUT": str(TIMEOUT - 20)})
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "exec", "--", sys.executable, str(RANK), "2",
                           str(_free_port())], capture_output=True, env=env, text=True, timeout=TIMEOUT)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            results[result["rank"]] = result
    assert sorted(results) == [0, 1], f"exit {proc.returncode}, stdout {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return results, proc.stderr


def test_collectives_equal_gloo(ranks):
    for result in ranks[0].values():
        assert not result.get("hung") and result["mismatch"] == [] and result["checked"] == 31, result


def test_distributed_data_parallel_equals_one_process(ranks):
    # fp32 sums in another order: a few ulps of parameters of size ~0.3 (measured 3e-8)
    for result in ranks[0].values():
        assert result["ddp_max_abs_diff"] < 1e-6, result


def test_a_dead_rank_fails_the_other(ranks):
    results, err = ranks
    survivor = results[0]
    # torch_npu reports the failed HCCL call; the emulator's line names the call, the rank and HCCL's code
    assert survivor["dead"] not in (None, "no error")
    assert "HcclAllreduce" in survivor["dead"], survivor["dead"]
    assert "pyaclnn-hccl: HcclAllReduce failed on rank 0 with HCCL error 13" in err, err[-3000:]
