"""Range and LogSpace (native_stubs/src/ops/math/range_space.toml): aclnnRange against torch CPU's range (exact for
integer outputs, the fp32 steps for floats), aclnnLogSpace against a float64 base ** linspace (within one ulp of the
result dtype), the dtype lists (950 in process, A2 in test_spatial2_dtype_lists.py's
child), the validation codes and messages; and torch_npu's
torch.range / torch.logspace against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, error_of, torch_npu_run, zeros
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("start,end,step,name", [(0, 10, 3, "int32"), (5, -7, -2, "int64"), (0.5, 3.0, 0.25, "float32"),
                                                 (1, 4, 0.5, "float16"), (-2.0, 2.0, 0.5, "bfloat16"),
                                                 (0.1, 1.0, 0.1, "float64")])
def test_range_matches_torch(start, end, step, name):
    want = start + np.arange(int(np.floor(round((end - start) / step, 9))) + 1) * np.float64(step)   # torch.range's
    got = ops.Range(start, end, step, zeros(want.shape, name))
    assert np.abs(got.astype(np.float64) - R.cast(want, name).astype(np.float64)).max() <= \
        (0 if name.startswith("int") else 2 * np.spacing(np.float32(max(abs(start), abs(end)))))


@pytest.mark.parametrize("start,end,steps,base,name", [(0.0, 3.0, 7, 10.0, "float32"), (-1.0, 2.0, 5, 2.0, "float16"),
                                                       (1.0, -2.0, 6, 3.0, "bfloat16"), (2.0, 2.0, 1, 10.0, "float32")])
def test_logspace_within_an_ulp(start, end, steps, base, name):
    got = ops.LogSpace(start, end, steps, base, zeros((steps,), name)).astype(np.float64)
    lin = R.cast(np.linspace(start, end, steps), name if name != "float32" else "float32").astype(np.float64)
    want = np.float64(base) ** lin
    ulp = np.spacing(np.abs(R.cast(want, name)).astype(R.np_dtype(name))).astype(np.float64)
    assert (np.abs(got - want) <= ulp).all(), (got, want)


@pytest.mark.parametrize("op,args,code,text", [
    ("Range", (None, 3, 1, zeros((4,), "float32")), 561103, ""),
    ("Range", (0, 3, 1, zeros((4,), "int8")), INVALID, "INT8"),
    ("Range", (0, 3, 1, zeros((), "float32")), INVALID, "Expected out a 1d tensor, but got 0."),
    ("Range", (0, 3, 0, zeros((4,), "float32")), INVALID, "step must be nonzero."),
    ("Range", (0, 3, -1, zeros((4,), "float32")), INVALID, "upper bound and lower bound inconsistent with step sign."),
    ("LogSpace", (None, 3.0, 4, 10.0, zeros((4,), "float32")), 561103, ""),
    ("LogSpace", (0.0, 3.0, 4, 10.0, zeros((4,), "float64")), INVALID, ""),
    ("LogSpace", (0.0, 3.0, -1, 10.0, zeros((4,), "float32")), INVALID, "LogSpace requires non-negative steps, given "
     "steps is -1"),
    # the op_api's ViewCopy of the [steps] result into a result of another size fails (nullptr)
    ("LogSpace", (0.0, 3.0, 2, 10.0, zeros((4, 7), "float32")), 561103, "result has 28 elements"),
    ("LogSpace", (0.0, 3.0, 5, 10.0, zeros((4,), "float32")), 561103, "the ViewCopy of the 5 steps"),
])
def test_range_space_validation(op, args, code, text):
    got, msg = error_of(getattr(ops, op), *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8"]
    calls = [("Range", [0, 3, 1, ["t", d, [4]]]) for d in cands] + \
            [("LogSpace", [0.0, 1.0, 3, 10.0, ["t", d, [3]]]) for d in cands]
    want = [0 if d != "int8" else INVALID for d in cands] + [0 if d in ("float32", "float16", "bfloat16") else INVALID
                                                             for d in cands]
    return calls, want


_BODY = """
OUT["range"] = [torch.range(1, 4, 0.5).tolist(), torch.range(1, 4, 0.5, device="npu").cpu().tolist()]
OUT["logspace"] = [torch.logspace(-1, 2, 6).tolist(), torch.logspace(-1, 2, 6, device="npu").cpu().tolist()]
"""


def test_torch_npu_range_logspace_match_cpu():
    r = torch_npu_run(_BODY, {})
    assert r["range"][0] == r["range"][1]
    np.testing.assert_allclose(r["logspace"][1], r["logspace"][0], rtol=2e-7)
