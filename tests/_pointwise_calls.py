"""Shared pieces of the pointwise operator tests (test_logical, test_bitops, test_clamp, test_act_fn,
test_act_grad): phase-1 calls described as data and their status codes on a SoC (Ascend 950 in this process,
another SoC in one child process), and a torch_npu body that runs torch calls given as source text on the NPU
and on the CPU.

A call is (operator, [argument ...]) with arguments ("t", dtype, shape) (a tensor of ones), ("s", value, dtype)
(an aclScalar), ("v", value) (a value passed as is: a double, a bool) or ("n",) (NULL)."""
from __future__ import annotations

from _status_calls import status_codes

SOC950 = "Ascend950PR"


def assert_codes(cases, soc: str) -> None:
    """Every (operator, args, expected code) case gives its code on `soc`."""
    got = status_codes([[c[0], c[1]] for c in cases], soc)
    bad = [(c[0], c[1], c[2], g) for c, g in zip(cases, got) if c[2] != g]
    assert not bad, bad[:5]


# For _math_ops.torch_npu_run: each case {"id", "fn": "lambda ...", "args": [encoded arrays]} runs fn on the
# arrays moved to the NPU and on the CPU arrays; OUT[id] = [npu result, cpu result] (encoded).
TORCH_EVAL_BODY = """
import torch.nn.functional as Fn
for case in SPEC["cases"]:
    fn = eval(case["fn"])
    args = [T(dec(a)) for a in case["args"]]
    got = fn(*[a.npu() for a in args])
    want = fn(*args)
    OUT[case["id"]] = [enc(to_np(got)), enc(to_np(want))]
"""

__all__ = ["SOC950", "assert_codes", "TORCH_EVAL_BODY"]
