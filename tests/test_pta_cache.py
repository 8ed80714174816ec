"""torch_npu's executor cache on the emulator (docs/torch_npu.md, "The executor cache").

tests/c/pta_cache.c drives the hooks as op-plugin's hit_cache / hit_cache_v2 do; the torch_npu case runs
repeated ops in the shared torch_npu child and compares them with torch on the CPU.
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env

import _torch_npu_server

SOURCE = REPO_ROOT / "tests" / "c" / "pta_cache.c"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, SOURCE)


def run(exe, *args: str, **env: str) -> dict[str, str]:
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60,
                          env=subprocess_env({"ASAN_OPTIONS": "detect_leaks=0", **env}))
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(re.findall(r"^(\w+) (\S+)$", done.stdout, re.M))


def test_hook_contract(driver):
    got = run(driver)
    expected = {
        "first_is_miss": "0", "first_value": "106", "entries_after_first": "1",
        # a hit runs the cached executor on this call's tensors, and only on them
        "repeat_is_hit": "1", "hit_value_new_tensors": "1016", "hit_left_old_out": "106",
        # same key, other aliasing (x + x) or another operator: phase 1 runs
        "alias_is_miss": "0", "alias_value": "26", "other_api_is_miss": "0", "hash0_is_miss": "0",
        "other_thread_is_miss": "0",
        "bytes_first_is_miss": "0", "bytes_repeat_is_hit": "1", "bytes_hit_value": "2019",
        "bytes_other_key_is_miss": "0", "bytes_other_key_value": "312",
        "nonzero_repeat_is_miss": "0",   # a data-dependent output shape is never replayed
        "failed_phase1": "1", "after_failed_phase1_is_miss": "0", "after_failed_phase1_value": "106",
        # bad input: refused, never a crash
        "null_workspace_size": "1", "null_workspace_size_message": "1", "null_buf": "1", "empty_buf": "1",
        "null_api": "0", "long_api": "0", "overflow_is_miss": "1", "inactive_is_miss": "1",
        "hits": "2", "records": "5", "entries_after_clear": "0",
        "live_executors": "0", "live_tensors": "0",
    }
    assert got == expected


def test_limit_and_eviction_follow_opbase(driver):
    got = run(driver, "limit", ACLNN_CACHE_LIMIT="2")
    assert got == {"hash_entries": "2", "hash_third_not_kept": "1", "hash_first_kept": "1",
                   "bytes_entries": "1", "bytes_newest_kept": "1", "bytes_oldest_dropped": "1",
                   "live_executors": "0", "live_tensors": "0"}


def test_the_cache_can_be_turned_off(driver):
    got = run(driver, "limit", PYACLNN_STUB_PTA_CACHE="0")
    assert got["hash_entries"] == "0" and got["bytes_entries"] == "0"


_TORCH = r"""
import ctypes, torch, torch_npu
from pyaclnn import _loader
from pathlib import Path
nn = ctypes.CDLL(str(Path(_loader.stub_library_dir()) / "libnnopbase.so"))
def hits():
    h = ctypes.c_uint64()
    nn.pyaclnn_stub_pta_stats(ctypes.byref(h), None, None, None)
    return h.value
torch.manual_seed(0)
h0 = hits()
res = []
def check(name, npu, cpu, exact=True):
    got = npu.cpu()
    ok = torch.equal(got, cpu) if exact else got.shape == cpu.shape and torch.allclose(got, cpu, rtol=1e-6, atol=1e-6)
    res.append([name, bool(ok), (got - cpu).abs().max().item() if got.shape == cpu.shape and got.numel() else 0.0])
a, b = torch.randn(4, 5), torch.randn(4, 5)
for i in range(3):   # same ops on new tensors each time
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    check("add_new", torch.add(x.npu(), y.npu(), alpha=0.5), torch.add(x, y, alpha=0.5))
    check("mul_new", x.npu() * y.npu(), x * y)
an, bn = a.npu(), b.npu()
for i in range(3):   # same tensors, in place: each run reads what the last one wrote
    an.add_(bn)
    a.add_(b)
    check("inplace_same", an, a)
for alpha in (0.5, 2.0, -1.0):   # changed attribute
    check("alpha_" + str(alpha), torch.add(an, bn, alpha=alpha), torch.add(a, b, alpha=alpha))
for dim in (0, 1, 0):   # changed attribute of a reduction
    check("sum_dim" + str(dim), an.sum(dim), a.sum(dim), exact=False)   # summation order: not bit for bit
for shape in ((4, 5), (2, 3), (4, 5), (7,)):   # changed shapes
    x, y = torch.randn(*shape), torch.randn(*shape)
    check("shape_" + str(shape), torch.sub(x.npu(), y.npu()), torch.sub(x, y))
x = torch.randn(6, 4)
xn = x.npu()
check("alias_same", xn + xn, x + x)   # same layout as below, aliased: not the x + y executor
check("alias_other", xn + xn.clone(), x + x)
check("view_offset", xn[1:] * xn[:-1], x[1:] * x[:-1])   # two views of one storage, other offsets
check("view_offset2", xn[2:] * xn[:-2], x[2:] * x[:-2])
nz = torch.tensor([0., 1., 0., 2.])   # data-dependent output shape: never from the cache
for i in range(2):
    check("nonzero", torch.nonzero(nz.npu()), torch.nonzero(nz))
    nz = torch.tensor([3., 0., 0., 4.])
OUT = {"res": res, "hits": hits() - h0}
"""


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="torch is not run under the ASan pass (as in test_torch_npu.py)")
def test_torch_npu_repeated_ops_match_torch_cpu():
    from pyaclnn._torch_npu_check import pair_problem
    reason = pair_problem()             # (torch / torch_npu not installed, or another pair)
    if reason is not None:
        pytest.skip(reason)
    out = _torch_npu_server.run(_TORCH, None, "Ascend910B4")
    bad = [(name, diff) for name, ok, diff in out["res"] if not ok]
    assert bad == []
    # at least the repeats of add, mul, add_, sum(0) and sub on [4, 5] came from the cache (0 with it off)
    assert out["hits"] >= 8
