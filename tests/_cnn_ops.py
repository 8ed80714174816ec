"""Shared pieces of the tests of the convolutional-model operators and the losses / optimiser (tests/test_conv.py,
test_batch_group_norm.py, test_pool.py, test_upsample.py, test_losses.py, test_optim_adamw.py): status codes of many
calls on another SoC in one child process (tensors described as data, every other argument passed as is), tolerance
checks against a float64 reference, error messages, and the torch_npu child (one per test file, _math_ops)."""
from __future__ import annotations


import numpy as np

from _status_calls import status_codes  # noqa: F401  (the tests import it from here)
from _math_ops import A2, INVALID, NULLPTR, dec, enc, torch_npu_run  # noqa: F401 (re-exported)
from pyaclnn.errors import AclError
from reference import elementwise as R

F32 = np.float32
# the SoCs' dtype names as the tests write them
ACL = {"FLOAT": "float32", "FLOAT16": "float16", "BF16": "bfloat16", "DOUBLE": "float64", "INT8": "int8",
       "UINT8": "uint8", "INT16": "int16", "INT32": "int32", "INT64": "int64", "BOOL": "bool",
       "HIFLOAT8": "hifloat8", "FLOAT8_E4M3FN": "float8_e4m3fn", "FLOAT8_E5M2": "float8_e5m2"}


def names(text: str) -> list[str]:
    return [ACL[n] for n in text.split()]


def tensor(a, dtype: str | None = None):
    """A device tensor of `a` (uint8 codes as HIFLOAT8 when dtype says so)."""
    import pyaclnn
    return pyaclnn.from_numpy(np.ascontiguousarray(a), dtype=dtype)


def zeros(shape, name: str) -> np.ndarray:
    if name == "hifloat8":
        return np.zeros(shape, np.uint8)
    if name == "float8_e4m3fn":
        import ml_dtypes
        return np.zeros(shape, ml_dtypes.float8_e4m3fn)
    return np.zeros(shape, R.np_dtype(name))


def f64(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def unit(name: str) -> float:
    """The dtype's unit roundoff (half an ulp at 1)."""
    return {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "hifloat8": 2.0 ** -4,
            "float8_e4m3fn": 2.0 ** -4, "float64": 2.0 ** -53}[name]


def within(got, want64, scale, rel: float, name: str = "float32"):
    """|got - want| <= rel * scale + (the output dtype's rounding of want) elementwise; NaN matches NaN."""
    got, want64 = f64(got), f64(want64)
    assert got.shape == want64.shape, (got.shape, want64.shape)
    nan = np.isnan(want64)
    assert (np.isnan(got) == nan).all(), "NaN positions differ"
    err = np.abs(got - want64)[~nan]
    tol = (rel * np.broadcast_to(f64(scale), want64.shape) + 2 * unit(name) * np.abs(want64))[~nan]
    assert (err <= tol + 1e-300).all(), f"max excess {np.max(err - tol)}; max err {err.max()}"
    return float(np.max(err / np.maximum(tol, 1e-300), initial=0.0))


def error_of(fn, *args) -> tuple[int, str]:
    """(code, message) of a call that fails; (0, '') when it passes."""
    try:
        fn(*args)
    except AclError as exc:
        return exc.code, str(exc)
    return 0, ""


def dtype_rows(op: str, make_args, accepted_950: list[str], accepted_a2: list[str], candidates: list[str]):
    """Calls of `op` with make_args(dtype) for every candidate dtype, and the expected status per SoC."""
    calls = [(op, make_args(d)) for d in candidates]
    return calls, [0 if d in accepted_950 else INVALID for d in candidates], \
        [0 if d in accepted_a2 else INVALID for d in candidates]


CANDIDATES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "bool", "hifloat8",
              "float8_e4m3fn"]


def assert_npu_matches_cpu(r: dict, rel: float) -> None:
    """A torch_npu child's entry {"cpu": [...], "npu": [...]} (or {"error": ...}): same shapes, each npu array
    within rel * max(1, max |cpu|) of the cpu one."""
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = dec(c), dec(n)
        assert c.shape == n.shape and np.abs(f64(c) - f64(n)).max() <= rel * max(1.0, np.abs(f64(c)).max())


# A torch_npu child's body tail: each f of the dict `calls` on x (cpu and npu), backward with a linspace
# gradient; OUT[name] = {"cpu": [y, x.grad], "npu": [y, x.grad]} (encoded) or {"error": ...}.
FWD_BWD_LOOP = """
for name, f in calls.items():
    xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    try:
        yc, yn = f(xc), f(xn)
        g = torch.linspace(-1, 1, yc.numel()).reshape(yc.shape)
        yc.backward(g)
        yn.backward(g.npu())
        OUT[name] = {"cpu": [enc(to_np(yc)), enc(to_np(xc.grad))], "npu": [enc(to_np(yn)), enc(to_np(xn.grad))]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


def dtype_list_mismatches(make_calls, candidates: list[str], accepted: dict, soc: str, extra: str = ""):
    """The calls make_calls(d) of every candidate dtype d on `soc` (one child for another SoC) whose status is not
    the expected one (0 when d is in accepted[operator], else 161002): [(operator, dtype, status), ...] (and the
    child's EXTRA when `extra` is given)."""
    calls = [c for d in candidates for c in make_calls(d)]
    want = [0 if d in accepted[c[0]] else INVALID for d in candidates for c in make_calls(d)]
    got, more = status_codes(calls, soc, extra=extra) if extra else (status_codes(calls, soc), None)
    bad = [(c[0], c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w]
    return (bad, more) if extra else bad
