"""aclnnAddRmsNormDynamicQuant (V1) and aclnnAddRmsNormDynamicQuantV2 on the CPU stub, both SoC
families, against the independent NumPy reference (tests/reference/add_rms_norm_dynamic_quant.py,
written from spec section B): y, scale and xOut must be bit-identical.

Each SoC family runs in one child process (PYACLNN_STUB_SOC is read once per process); the calls
of a family are batched (test_add_rms_norm_dynamic_quant_harness.py). Covered: fp16 and bf16
inputs; every output dtype of each chip and version; with and without smooth scales and beta;
every outputMask form; row lengths on both sides of every template switch point (A2: normal,
single-row, slice-D; 950: perf, normal, single-row, split); zero / overflowing / NaN rows; strided
views; repeatable executors; thread counts; and the option of each open hardware question.
"""
from __future__ import annotations

import itertools
import zlib

import ml_dtypes
import numpy as np
import pytest
from test_add_rms_norm_dynamic_quant_harness import compare, numeric_call, reference, run_batch

from reference.arnq_tiling import split_chunk, split_loop

SOCS = ("a2", "950")
X_TYPES = ("float16", "bfloat16")
Y_TYPES = {("a2", 1): ("int8",), ("a2", 2): ("int8", "int4", "int32"),
           ("950", 1): ("int8", "hifloat8", "float8_e5m2", "float8_e4m3fn"),
           ("950", 2): ("int8", "int4", "int32", "hifloat8", "float8_e5m2", "float8_e4m3fn")}

# (version, smooth, beta, mask): every outputMask form with the smooth scales it allows
V1_FORMS = [(1, (False, False), False, None), (1, (True, False), False, None), (1, (True, True), False, None)]
V2_FORMS = [(2, smooth, beta, mask)
            for smooth, mask in [((False, False), None), ((True, False), None), ((True, True), None),
                                 ((False, False), (True, False)), ((True, False), (True, False)),
                                 ((False, False), (False, True)), ((False, True), (False, True)),
                                 ((False, False), (True, True)), ((True, False), (True, True)),
                                 ((False, True), (True, True)), ((True, True), (True, True))]
            for beta in (False, True)]


def _case(soc, version, x, y, smooth, beta, mask, n, m=3, data="random", **extra):
    case = dict(soc=soc, version=version, x=x, y=y, smooth=tuple(smooth), beta=beta,
                mask=None if mask is None else list(mask), n=n, m=m, data=data)
    case.update(extra)
    case["seed"] = zlib.crc32(repr((soc, version, x, y, smooth, beta, mask, n, m, data,
                                    sorted(extra.items()))).encode())
    case["id"] = (f"{soc}-v{version}-{x[:4]}-{y}-s{int(smooth[0])}{int(smooth[1])}-b{int(beta)}-"
                  f"m{'' if mask is None else ''.join(str(int(v)) for v in mask)}-{m}x{n}-{data}"
                  + "".join(f"-{k}={v}" for k, v in sorted(extra.items()) if k != "env")
                  + "".join(f"-{k[19:]}={v}" for k, v in sorted(extra.get("env", {}).items())))
    return case


def _fits(y, n):
    return not (y == "int32" and n % 8) and not (y == "int4" and n % 2)


def _all_forms(soc):
    """Every (x dtype, y dtype, version form) of a chip at a small row length (perf / normal)."""
    for x, (version, smooth, beta, mask) in itertools.product(X_TYPES, V1_FORMS + V2_FORMS):
        for y in Y_TYPES[(soc, version)]:
            yield _case(soc, version, x, y, smooth, beta, mask, 64)


# Row lengths around every template switch point (spec B.8.1, B.9.1 table, appendix D) and the
# configuration that puts each one in its template.
OUT1 = (2, (False, False), False, (True, False))          # out1 only, no smooth, no beta
SMOOTH1 = (2, (True, False), False, (True, False))        # out1 with smoothScale1
TWO = (1, (True, True), False, None)                      # out1 + out2, two smooth scales
TWO_BETA = (2, (True, True), True, None)
BOTH_PLAIN = (2, (False, False), False, (True, True))     # out1 + out2, no smooth
V1_PLAIN = (1, (False, False), False, None)
SWEEP = {
    "a2": [(8, V1_PLAIN), (64, TWO), (65, OUT1), (127, TWO_BETA), (128, BOTH_PLAIN), (129, SMOOTH1),
           (1000, TWO), (8128, TWO_BETA), (8129, TWO_BETA), (8192, V1_PLAIN), (8896, TWO),
           (8897, TWO), (8960, OUT1), (12224, SMOOTH1), (12225, V1_PLAIN), (12225, TWO),
           (14064, BOTH_PLAIN), (15873, TWO), (17728, TWO), (17729, TWO_BETA), (30000, OUT1)],
    "950": [(8, V1_PLAIN), (64, TWO), (65, OUT1), (127, TWO_BETA), (128, BOTH_PLAIN), (129, SMOOTH1),
            (1000, TWO), (8192, V1_PLAIN), (8193, TWO), (8896, TWO), (8897, SMOOTH1),
            (9728, TWO_BETA), (9729, TWO_BETA), (10544, TWO), (10545, TWO), (12224, OUT1),
            (12225, TWO), (12656, BOTH_PLAIN), (12657, SMOOTH1), (12657, BOTH_PLAIN),
            (14064, OUT1), (14065, OUT1), (14848, OUT1), (14849, OUT1), (15872, TWO),
            (15873, OUT1), (15873, TWO), (20480, TWO), (24576, TWO_BETA), (30000, SMOOTH1)],
}


def _sweep(soc):
    types = itertools.cycle(itertools.product(X_TYPES, range(6)))
    for n, (version, smooth, beta, mask) in SWEEP[soc]:
        x, yi = next(types)
        ys = Y_TYPES[(soc, version)]
        y = next(t for t in (ys[(yi + i) % len(ys)] for i in range(len(ys))) if _fits(t, n))
        yield _case(soc, version, x, y, smooth, beta, mask, n, m=2 if n > 1024 else 3)


def _special(soc):
    """Zero, overflowing and NaN rows (B.12) for every output dtype, on the short and the long
    templates, and row counts 1 and 17."""
    for version in (1, 2):
        for i, y in enumerate(Y_TYPES[(soc, version)]):
            x = X_TYPES[i % 2]
            yield _case(soc, version, x, y, (True, True), version == 2, None, 200, m=4, data="special")
    long_n = 17729 if soc == "a2" else 20480
    yield _case(soc, 1, "float16", "int8", (True, True), False, None, long_n, m=3, data="special")
    yield _case(soc, 2, "bfloat16", "int8", (False, False), False, (True, True), 14000, m=3, data="special")
    yield _case(soc, 2, "float16", "int8", (True, False), True, None, 96, m=1)
    yield _case(soc, 2, "bfloat16", "int4", (False, True), False, (True, True), 96, m=17)
    yield _case(soc, 2, "float16", "int8", (True, True), False, None, 64, m=6, lead=(2, 3))


def _quirk(soc):
    """950 single-row quirk (quant2 first, y divided in place by scale2 without smoothScale2) in
    every combination; the same calls on A2 use its normal / single-row templates."""
    for smooth in ((False, False), (True, False), (False, True), (True, True)):
        for y in ("int8", "float8_e4m3fn") if soc == "950" else ("int8", "int4"):
            yield _case(soc, 2, "bfloat16", y, smooth, False, (True, True), 14000, m=2)


def _options(soc):
    """The alternative of every open question (section C), where it changes something."""
    env = "PYACLNN_STUB_ARNQ_"
    c = []
    for n in (1000, 14065, 20480):
        c.append(_case(soc, 2, "float16", "int8", (False, False), False, (True, False), n, m=2,
                       env={env + "TREE64": "halves"}))
    for mode in ("fma", "double"):
        c.append(_case(soc, 1, "bfloat16", "int8", (True, True), False, None,
                       1000 if soc == "a2" else 14849, m=2, env={env + "SCALAR_RSTD": mode}))
    c.append(_case(soc, 1, "float16", "int8", (True, True), False, None, 1000, m=3,
                   env={env + "MULA": "unfused"}))
    for n in (200, 17729):
        c.append(_case(soc, 1, "float16", "int8", (True, True), False, None, n, m=3, data="special",
                       env={env + "MAX_NAN": "ignore"}))
    c.append(_case(soc, 1, "float16", "int8", (False, False), False, None, 200, m=3, data="special",
                   env={env + "OVERFLOW": "saturation"}))
    if soc == "950":
        for y, fp8_nan in itertools.product(("float8_e4m3fn", "float8_e5m2"), ("positive", "keep")):
            c.append(_case(soc, 1, "bfloat16", y, (True, True), False, None, 200, m=4, data="special",
                           env={env + "FP8_NAN": fp8_nan}))
        c.append(_case(soc, 1, "bfloat16", "hifloat8", (True, True), False, None, 200, m=4,
                       data="special", env={env + "HIF8_NAN": "nan"}))
        for n in (9000, 12000, 30000):
            c.append(_case(soc, 2, "float16", "int8", (True, True), True, None, n, m=2,
                           env={env + "UB_950": "196608"}))
    return c


def _layouts(soc):
    """Strided (non-contiguous) views of inputs and outputs, a [M, 1] scale, a repeatable executor
    run twice, and several thread counts on a tensor big enough to be split."""
    n, m = 40, 5
    c = [_case(soc, 2, "float16", "int8", (True, True), True, (True, True), n, m=m,
               layouts={"x1": {"strides": [n + 3, 1], "offset": 5},
                        "x2": {"strides": [1, m]},
                        "x_out": {"strides": [n + 2, 1], "offset": 1},
                        "y1": {"strides": [n + 4, 1]},
                        "y2": {"strides": [1, m]},
                        "scale1": {"strides": [2]},
                        "gamma": {"strides": [3]}}),
         _case(soc, 2, "bfloat16", "int32", (True, False), False, None, 64, m=3,
               layouts={"y1": {"strides": [9, 1], "offset": 2}}),
         _case(soc, 1, "bfloat16", "int8", (True, True), False, None, 64, m=4, scale_shape=(4, 1)),
         _case(soc, 2, "float16", "int8", (True, True), False, None, 512, m=4, repeat=2)]
    for threads in ("1", "3", "0"):
        c.append(_case(soc, 2, "bfloat16", "int8", (True, True), False, None, 1024, m=257,
                       env={"PYACLNN_STUB_ARNQ_THREADS": threads}))
    return c


def _code_paths(soc):
    """The portable loops (what a machine without AVX2 runs) and the streaming-store path, which this
    machine's automatic choices would otherwise never exercise: the same bits are required."""
    types = [("bfloat16", "int8"), ("float16", "int4")]
    if soc == "950":
        types += [("bfloat16", "float8_e4m3fn"), ("float16", "hifloat8")]
    return [_case(soc, 2, x, y, (True, True), True, None, n, m=3, data=data, env=env)
            for env in ({"PYACLNN_STUB_ARNQ_ISA": "generic"}, {"PYACLNN_STUB_ARNQ_STREAM": "always"})
            for x, y in types for n, data in ((64, "special"), (1000, "random"), (20480, "random"))]


def _cases(soc):
    return (list(_all_forms(soc)) + list(_sweep(soc)) + list(_special(soc)) + list(_quirk(soc))
            + _options(soc) + _layouts(soc) + _code_paths(soc))


CASES = {soc: _cases(soc) for soc in SOCS}
PARAMS = [pytest.param(soc, i, id=case["id"]) for soc in SOCS for i, case in enumerate(CASES[soc])]


@pytest.fixture(scope="module")
def outcomes():
    """soc -> list of (call, result), computed on first use (one child process per SoC)."""
    cache = {}

    def get(soc):
        if soc not in cache:
            calls = [numeric_call(case) for case in CASES[soc]]
            cache[soc] = list(zip(calls, run_batch(soc, calls), strict=True))
        return cache[soc]
    return get


@pytest.mark.parametrize("soc,index", PARAMS)
def test_bit_identical_to_reference(outcomes, soc, index):
    call, result = outcomes(soc)[index]
    problems = compare(CASES[soc][index], call, result)
    assert not problems, "\n".join(problems)


def test_cases_reach_every_template():
    """The sweep above really lands in each template of each chip (as the reference chooses)."""
    reached = {(soc, reference(case)["template"]) for soc in SOCS for case in CASES[soc]
               if case["n"] > 1000 or case["data"] == "random"}
    for t in ("normal", "single_row", "slice_d"):
        assert ("a2", t) in reached
    for t in ("perf", "normal", "single_row", "split"):
        assert ("950", t) in reached


def test_split_cases_walk_every_tail_branch():
    """950 split: the tail-loop stage, both tail-tail branches and a zero tail-tail are used."""
    seen = set()
    for case in CASES["950"]:
        if reference(case)["template"] != "split":
            continue
        out2 = case["mask"][1] if case["mask"] else all(case["smooth"])
        out1 = case["mask"][0] if case["mask"] else True
        p0 = split_chunk(int(out1), int(out2), sum(case["smooth"]), int(case["beta"]))
        tail = case["n"] - p0 * split_loop(case["n"], p0)
        tail_loops, tail_tail = divmod(tail, p0)
        seen.add(("loops" if tail_loops else "no loops",
                  "none" if tail_tail == 0 else "short" if tail_tail <= p0 // 2 else "long"))
    assert {("no loops", "short"), ("no loops", "long"), ("loops", "long"), ("loops", "none")} <= seen


# ------------------------------------------------------------------------------------------------
# The vendor sample's inputs (spec B.15) with values DERIVED from the spec, not published: the
# vendor doc and sample print no expected outputs for them. The spec author worked these numbers out
# from the spec by hand (B.15 says "derived"), independently of tests/reference and of the C code;
# they are not vendor measurements.
# ------------------------------------------------------------------------------------------------

EXAMPLES = [
    # version, smooth, beta, expected scale bits (derived from the spec, B.15)
    (1, (True, True), False, 0x3C912240),    # 0.017716527
    (1, (False, False), False, 0x3C418300),  # 0.011811024
    (2, (True, True), True, 0x3D112242),     # 0.03543306
]


@pytest.mark.parametrize("soc", SOCS)
def test_vendor_sample_inputs_give_spec_derived_values(soc):
    cases = [_case(soc, v, "float16", "int8", s, b, None, 8, m=2, data="example") for v, s, b, _ in EXAMPLES]
    calls = [numeric_call(c) for c in cases]
    for (version, smooth, _, bits), call, result in zip(EXAMPLES, calls, run_batch(soc, calls), strict=True):
        assert (result["phase1"], result["phase2"], result["sync"]) == (0, 0, 0), result
        out = result["outputs"]
        assert np.frombuffer(out["y1"], np.int8).tolist() == [127] * 16
        assert np.frombuffer(out["x_out"], np.float16).tolist() == [1.0] * 16
        assert np.frombuffer(out["scale1"], np.uint32).tolist() == [bits] * 2
        if all(smooth):
            assert np.frombuffer(out["y2"], np.int8).tolist() == [127] * 16
            assert np.frombuffer(out["scale2"], np.uint32).tolist() == [bits] * 2
        assert result["ws"] > 0    # a computing launch asks for the library workspace (B.13)


@pytest.mark.parametrize("y", ["int8", "hifloat8", "float8_e4m3fn"])
def test_950_newton_rstd_is_infinite_when_variance_plus_epsilon_is_zero(y):
    """B.9.2: the 950 perf template's Newton-Raphson rstd ends with `v == 0 -> rstd = inf`. The 950
    accepts epsilon <= 0, so v = S*avg + eps can be exactly 0 with non-zero x: the vendor sample's
    data (x = 0.5 + 0.5 = 1 everywhere, n = 64: S*avg = 1) and eps = -1. Then y = x*inf*gamma = inf
    and scale = inf / DMax = inf; the iteration alone would give NaN (0 * inf inside it)."""
    case = _case("950", 1, "float16", y, (True, True), False, None, 64, m=2, data="example",
                 eps=-1.0)
    assert reference(case)["template"] == "perf"
    call = numeric_call(case)
    (result,) = run_batch("950", [call])
    problems = compare(case, call, result)
    assert not problems, "\n".join(problems)
    for name in ("scale1", "scale2"):
        assert np.frombuffer(result["outputs"][name], np.float32).tolist() == [np.inf] * 2


# ------------------------------------------------------------------------------------------------
# Q11 decision: NaN quotients of the 950 FP8 / HiF8 casts (SAT, CTRL[60] cleared) encode as 0x00, as
# the vendor Cast documentation says for CTRL[50] = 0 (grouped_dynamic_mx_quant.md 4.6); the NaN
# codes Q11 assumed are the option. +-inf quotients saturate to +-max with either.
# ------------------------------------------------------------------------------------------------

# y dtype: (+max, -max, NaN code of the option), the option's variable and value
NAN_DECISION = {"float8_e4m3fn": (0x7E, 0xFE, 0x7F, "FP8_NAN", "positive"),
                "float8_e5m2": (0x7B, 0xFB, 0x7E, "FP8_NAN", "positive"),
                "hifloat8": (0x6E, 0xEE, 0x80, "HIF8_NAN", "nan")}


@pytest.mark.parametrize("y", list(NAN_DECISION))
def test_950_nan_quotient_is_zero_by_default_and_nan_code_as_option(y):
    """Row 0 all zero: scale 0, q = 0/0 -> every y code 0x00 (the option: the NaN code). Row 1: a
    huge epsilon and the smallest bf16 gamma make scale = m*D round to 0, so q = +-y/0 = +-inf ->
    +-max, and its zero elements are 0/0 -> 0x00 (or the NaN code)."""
    pos, neg, nan_code, var, value = NAN_DECISION[y]
    n = 8
    x = np.zeros((2, n), ml_dtypes.bfloat16)
    x[1] = [1.0, -1.0, 0.0, 0.5] * 2
    gamma = np.full(n, 2.0 ** -133, ml_dtypes.bfloat16)
    calls = []
    for env in ({}, {"PYACLNN_STUB_ARNQ_" + var: value}):
        call = numeric_call(_case("950", 1, "bfloat16", y, (False, False), False, None, n, m=2,
                                  eps=1e8, env=env))
        for name, arr in (("x1", x), ("x2", x), ("gamma", gamma)):
            call["tensors"][name]["fill"] = arr.tobytes()
        calls.append(call)
    for result, nan in zip(run_batch("950", calls), (0x00, nan_code), strict=True):
        assert (result["phase1"], result["phase2"], result["sync"]) == (0, 0, 0), result
        out = result["outputs"]
        assert np.frombuffer(out["scale1"], np.float32).tolist() == [0.0, 0.0]
        assert np.frombuffer(out["y1"], np.uint8).reshape(2, n).tolist() == \
            [[nan] * n, [pos, neg, nan, pos] * 2]
