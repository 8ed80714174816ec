"""Shared pieces of the tests of the gather / scatter, pad and shape-move families (tests/test_gather_scatter.py,
tests/test_pad.py, tests/test_shape_moves.py): samples of every dtype, the status codes of many calls on another
SoC in one child process (tensors, scalars, integers, integer lists, NULL), and one torch_npu child on the emulator
for the three files together (each file registers its torch code at import; the first test that asks runs them
all and the results are kept: torch_npu takes seconds to import)."""
from __future__ import annotations


import numpy as np

from _status_calls import status_codes
from _math_ops import A2, ALL, INVALID, NULLPTR, dec, enc, names, same_bits, torch_npu_run  # noqa: F401
from reference import elementwise as R

INNER_NULLPTR = 561103
RNG = np.random.default_rng(2828)
FLOATS = ("float32", "float16", "bfloat16", "float64")


def npdt(name: str) -> np.dtype:
    return R.np_dtype(name)


def sample(name: str, shape, rng=RNG) -> np.ndarray:
    """Distinct-looking values of dtype `name` (floats with -0.0, inf, NaN; integers over a small range)."""
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    dt = npdt(name)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -100
        return rng.integers(lo, 100, shape).astype(dt)
    x = rng.standard_normal(shape) * 4
    flat = x.reshape(-1)
    if flat.size >= 8:
        flat[:4] = [-0.0, np.inf, -np.inf, np.nan]
    return R.cast(x, name)


# ---- status codes on a SoC ------------------------------------------------------------------------------

def check_lists(cases: list, soc: str, extra: list | None = None) -> list:
    """cases: (operator, dtype, [args], expected code): every code as expected on `soc` (Ascend 950 in this
    process, another SoC in one child). `extra` calls ("=Op", args) run in the same child; their results'
    bytes come back."""
    calls = [(op, args) for op, _, args, _ in cases]
    got = status_codes(calls + list(extra or []), soc)
    results = got[len(calls):]
    got = got[:len(calls)]
    bad = [(op, dt, g, want) for (op, dt, _, want), g in zip(cases, got) if g != want]
    assert bad == [], bad
    return results


# ---- one torch_npu child for the three files -----------------------------------------------------------

_BODIES: dict[str, tuple[str, dict]] = {}
_RESULTS: dict[str, dict] = {}


def register_torch(family: str, body: str, spec: dict):
    """Registers a family's torch code: a function body that reads SPEC and fills OUT (run under
    `python -m pyaclnn exec` with torch_npu imported; helpers T, to_np, enc, dec, run_array as in _math_ops)."""
    _BODIES[family] = (body, spec)


def torch_results(family: str) -> dict:
    """What the family's torch code reported (the first call runs every registered family in one child)."""
    if family not in _RESULTS:
        # Each family's code runs with OUT (a global: the run / run_array helpers of the snippet fill it) bound
        # to that family's own dict.
        script = ["OUT_ALL, SPEC_ALL, _OUT = {}, SPEC, OUT"]
        for fam, (body, _) in _BODIES.items():
            script.append(f"def _run_{fam}(SPEC):\n" + "\n".join("    " + ln for ln in body.strip("\n").splitlines()))
            script.append(f"OUT = OUT_ALL[{fam!r}] = {{}}\n_run_{fam}(SPEC_ALL[{fam!r}])")
        script.append("OUT = _OUT\nOUT.update(OUT_ALL)")
        out = torch_npu_run("\n".join(script) + "\n", {fam: spec for fam, (_, spec) in _BODIES.items()})
        _RESULTS.update(out)
    return _RESULTS[family]

