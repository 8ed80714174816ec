"""Shared pieces of the pointwise math tests (tests/test_math_*.py): input samples with the special values,
ulp checks, the status codes of many calls on another SoC (one subprocess), and snippets run in the session's
torch_npu process on the emulator that report what torch's npu calls gave next to torch CPU.

Each test file is data-driven: a table of operators (their vendor dtype lists per SoC, written from the
vendor's op_api sources, a NumPy reference and its bound); adding an operator adds a row."""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

import _torch_npu_server
from _status_calls import status_codes  # noqa: F401  (the tests import it from here)
from pyaclnn.errors import AclError
from reference import elementwise as R

NULLPTR, INVALID = 161001, 161002
A2 = "Ascend910B4"
# Every dtype the engine holds, named as the tests name them (aclDataType names in the catalog).
ACL_NAMES = {"float32": "FLOAT", "float16": "FLOAT16", "bfloat16": "BF16", "float64": "DOUBLE", "int8": "INT8",
             "uint8": "UINT8", "int16": "INT16", "int32": "INT32", "int64": "INT64", "bool": "BOOL", "uint16": "UINT16",
             "uint32": "UINT32", "uint64": "UINT64"}
NP_NAMES = {v: k for k, v in ACL_NAMES.items()}
ALL = list(ACL_NAMES)


def names(text: str) -> list[str]:
    """'FLOAT FLOAT16 BF16' -> ['float32', 'float16', 'bfloat16'] (the vendor lists as the tests write them)."""
    return [NP_NAMES[n] for n in text.split()]


def sample(name: str, shape, rng, scale: float = 4.0, specials: bool = True) -> np.ndarray:
    """Random values of dtype `name`: integers over their range (small ones for 64-bit), floats normal * scale
    with 0, -0, inf, -inf, NaN at the front."""
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    dt = R.np_dtype(name)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dt)
    x = rng.standard_normal(shape) * scale
    flat = x.reshape(-1)
    if specials and flat.size >= 8:
        flat[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    return R.cast(x, name)


def every_value(name: str) -> np.ndarray:
    """Every finite and infinite value of a 16-bit float dtype, both signs, and NaN."""
    top = 0x7C00 if name == "float16" else 0x7F80
    pos = np.arange(0, top + 1, dtype=np.uint16)
    bits = np.concatenate([pos, pos | 0x8000, np.uint16([top | 1])])
    return bits.view(R.np_dtype(name))


def fp32_grid(lo: float, hi: float, step: int = 97) -> np.ndarray:
    """Every `step`-th fp32 value in [lo, hi) (0 < lo < hi), both signs."""
    b = np.arange(np.float32(lo).view(np.uint32), np.float32(hi).view(np.uint32), step, dtype=np.uint32)
    x = b.view(np.float32)
    return np.concatenate([x, -x])


def libm(name: str, fallback):
    """A float64 function through the C library (Python's math module calls it), as the vendor's AI CPU
    kernels compute DOUBLE. NumPy's own float64 ufuncs change between releases (1.24's SIMD arcsin / sinh /
    cosh / arctan2 differ from libm by up to 2 ulp). `fallback` (NumPy) answers where math raises instead
    of returning a special value: domain errors (NaN) and overflow (inf)."""
    f = getattr(math, name)

    def one(*args):
        try:
            return f(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(fallback(*args))

    def vec(*arrays):
        arrays = [np.asarray(a, np.float64) for a in arrays]
        return np.frompyfunc(one, len(arrays), 1)(*arrays).astype(np.float64)
    return vec


def ulp(got, want, name: str) -> np.ndarray:
    return R.ulp_distance(np.asarray(got), np.asarray(want), name)


def same_bits(got, want):
    """Equal bit patterns (NaN against NaN of any payload; +0 and -0 differ)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    g, w = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if g.dtype.kind == "f" or g.dtype == R.BF16:
        gn, wn = np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64))
        bad = (gn != wn) | (~gn & (g.view(f"u{g.itemsize}") != w.view(f"u{w.itemsize}")))
    else:
        bad = g.view(np.uint8).reshape(g.shape + (-1,)) != w.view(np.uint8).reshape(w.shape + (-1,))
        bad = bad.any(axis=-1)
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))[:5]
        raise AssertionError(f"{bad.sum()} of {bad.size} differ, e.g. got {g.reshape(-1)[i]} want {w.reshape(-1)[i]}")


def code(fn, *args) -> int:
    try:
        fn(*args)
    except AclError as exc:
        return exc.code
    return 0


# ---- torch_npu on the emulator ----------------------------------------------------------------------

def torch_npu_reason() -> str | None:
    from pyaclnn._torch_npu_check import pair_problem
    return pair_problem()


def torch_npu_run(body: str, spec: dict, soc: str = "Ascend950PR") -> dict:
    """Runs `body` in the session's torch_npu process (tests/_torch_npu_server.py), `spec` (JSON) bound to
    SPEC and helpers `to_np(t)` (an npu or cpu tensor as a NumPy array, bf16 as ml_dtypes), `T(a)` (a
    NumPy array as a torch tensor), `enc` / `dec` (an array to JSON and back) and `run(key, f)` /
    `run_array` / `run_arrays` (OUT[key] = f()'s value, tensor or tensors, or {"error": ...} if it raises);
    `body` fills the dict OUT, which comes back. Skips without the pair."""
    reason = torch_npu_reason()
    if reason is not None:
        pytest.skip(reason)
    if "libasan" in __import__("os").environ.get("LD_PRELOAD", ""):
        pytest.skip("torch_npu is not run under the ASan pass")
    script = textwrap.dedent("""
        import json, sys
        import numpy as np, ml_dtypes
        import torch, torch_npu

        def to_np(t):
            t = t.detach().cpu()
            if t.dtype == torch.bfloat16:
                return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
            return t.numpy()

        def T(a):
            a = np.asarray(a)
            if a.dtype == ml_dtypes.bfloat16:
                return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
            return torch.from_numpy(a.copy())

        def enc(a):
            a = np.ascontiguousarray(a)
            return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}

        def dec(d):
            dt = ml_dtypes.bfloat16 if d["dtype"] == "bfloat16" else np.dtype(d["dtype"])
            return np.frombuffer(bytes.fromhex(d["hex"]), dt).reshape(d["shape"])

        def _keep(key, f, convert):
            try:
                OUT[key] = convert(f())
            except Exception as exc:         # a refusal of torch_npu's is a result the test looks at
                OUT[key] = {"error": str(exc)[:600]}

        def run(key, f):                     # OUT[key] = f() as it is (JSON), or {"error": ...}
            _keep(key, f, lambda v: v)

        def run_array(key, f):               # the tensor f() returns, encoded
            _keep(key, f, lambda t: enc(to_np(t)))

        def run_arrays(key, f):              # the tensors f() returns, each encoded
            _keep(key, f, lambda ts: [enc(to_np(t)) for t in ts])
    """) + textwrap.dedent(body)
    return _torch_npu_server.run(script, spec, soc)


def enc(a) -> dict:
    a = np.ascontiguousarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}


def dec(d: dict) -> np.ndarray:
    dt = R.BF16 if d["dtype"] == "bfloat16" else np.dtype(d["dtype"])
    # a writable copy: torch.from_numpy warns about read-only arrays
    return np.frombuffer(bytes.fromhex(d["hex"]), dt).reshape(d["shape"]).copy()
