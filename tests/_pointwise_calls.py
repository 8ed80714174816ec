"""Shared pieces of the pointwise operator tests (test_logical, test_bitops, test_clamp, test_act_fn,
test_act_grad): phase-1 calls described as data and their status codes on a SoC (Ascend 950 in this process,
another SoC in one child process), and a torch_npu body that runs torch calls given as source text on the NPU
and on the CPU.

A call is (operator, [argument ...]) with arguments ("t", dtype, shape) (a tensor of ones), ("s", value, dtype)
(an aclScalar), ("v", value) (a value passed as is: a double, a bool) or ("n",) (NULL)."""
from __future__ import annotations

import json

import numpy as np

import helpers
import _math_ops
from _math_ops import A2, code
from pyaclnn import ops
from reference import elementwise as R

SOC950 = "Ascend950PR"


def arg(a):
    if a[0] == "t":
        return np.ones(a[2], R.np_dtype(a[1]))
    if a[0] == "s":
        return ops.Scalar(a[1], a[2])
    return a[1] if a[0] == "v" else None


def codes_here(cases) -> list[int]:
    """The status of each (operator, args, ...) case in this process."""
    return [code(getattr(ops, c[0]), *[arg(a) for a in c[1]]) for c in cases]


def codes_on(soc: str, cases) -> list[int]:
    """The status of each case on `soc`, in one child process (_math_ops's child, with by-value arguments)."""
    child = _math_ops._CHILD.replace("    return None", '    return a[1] if a[0] == "v" else None')
    calls = json.dumps([[c[0], c[1]] for c in cases])
    rc, stdout, stderr = helpers.run_python(child.replace("sys.stdin.read()", repr(calls)),
                                            {"PYACLNN_STUB_SOC": soc, "PYTHONPATH": str(helpers.REPO_ROOT / "tests")},
                                            timeout=300)
    lines = [ln for ln in stdout.splitlines() if ln.startswith("RESULT ")]
    assert rc == 0 and lines, stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def assert_codes(cases, soc: str) -> None:
    """Every (operator, args, expected code) case gives its code on `soc`."""
    got = codes_here(cases) if soc == SOC950 else codes_on(soc, cases)
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

__all__ = ["A2", "SOC950", "arg", "assert_codes", "codes_here", "codes_on", "TORCH_EVAL_BODY"]
