"""The random-number operators (aclnnInplaceUniform, aclnnInplaceNormal, aclnnDropoutGenMaskV2,
aclnnDropoutDoMask, aclnnDropoutV3): fidelity class "statistical" -- the NPU's streams are its own, so
the tests check distributions (bounds, means, variances, keep rates) on large draws, determinism for one
(seed, offset), different streams for different offsets, every dtype of the vendor's lists and the
vendor's validation codes; and, beyond that, that the emulator computes exactly the stream it documents
(tests/reference/random.py: Philox4x32-10, checked against the generator's published known answers)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import helpers
import pyaclnn
from pyaclnn import ops
from _op_helpers import INNER_NULLPTR, INVALID, NULLPTR, code_of, raw_null_status
from reference import elementwise as R
from reference import random as RR
from reference.random import philox4x32_10

N = 200_000
UNIFORM_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64"]
NORMAL_DTYPES = UNIFORM_DTYPES + ["bool"]


def npdt(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def uniform(shape, dtype, frm, to, seed=1, offset=0):
    t = pyaclnn.empty(shape, dtype)
    ops.InplaceUniform(t, frm, to, seed, offset)
    return t.numpy()


def normal(shape, dtype, mean, std, seed=1, offset=0):
    t = pyaclnn.empty(shape, dtype)
    ops.InplaceNormal(t, mean, std, seed, offset)
    return t.numpy()


def test_the_reference_generator_gives_philoxs_published_known_answers():
    # Random123's kat_vectors for philox4x32_10: what the emulator's stream is built on.
    kat = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in kat:
        assert tuple(int(v) for v in philox4x32_10(np.array([ctr], np.uint32), key)[0]) == want


# ---- aclnnInplaceUniform ------------------------------------------------------------------------

def test_uniform_float32_is_the_documented_stream():
    got = uniform((1000,), "float32", -2.0, 3.0, seed=2 ** 40 + 7, offset=36)
    np.testing.assert_array_equal(got, RR.uniform(2 ** 40 + 7, 36, 1000, -2.0, 3.0, "float32"))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float64", "int32", "int8"])
def test_uniform_other_dtypes_are_the_documented_stream(name):
    got = uniform((4096,), name, -5.0, 7.0, seed=11, offset=4)
    want = RR.uniform(11, 4, 4096, -5.0, 7.0, name)
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("name", UNIFORM_DTYPES)
def test_uniform_bounds_mean_and_variance(name):
    lo, hi = (-3.0, 5.0) if name != "uint8" else (2.0, 200.0)
    x = uniform((N,), name, lo, hi, seed=3).astype(np.float64)
    assert x.min() >= lo and x.max() < hi
    if name in R.FLOATS:
        mean, var = (lo + hi) / 2, (hi - lo) ** 2 / 12
    else:                                  # truncation toward zero of a uniform value in [lo, hi)
        vals = np.arange(int(np.floor(lo)), int(np.ceil(hi)) + 1)
        left = np.where(vals > 0, vals, np.where(vals < 0, vals - 1, -1))      # trunc(x) == k on (left, right)
        right = np.where(vals > 0, vals + 1, np.where(vals < 0, vals, 1))
        p = np.clip(np.minimum(right, hi) - np.maximum(left, lo), 0, None) / (hi - lo)
        mean, var = (vals * p).sum(), (vals ** 2 * p).sum() - (vals * p).sum() ** 2
    sigma = np.sqrt(var / N)
    assert abs(x.mean() - mean) < 5 * sigma + (0.02 if name == "bfloat16" else 0)   # bf16: 8-bit rounding
    assert abs(x.var() / var - 1) < 0.02


def test_uniform_deterministic_per_seed_and_offset_and_streams_differ():
    a = uniform((5000,), "float32", 0.0, 1.0, seed=7, offset=12)
    np.testing.assert_array_equal(a, uniform((5000,), "float32", 0.0, 1.0, seed=7, offset=12))
    for seed, offset in [(7, 24), (8, 12)]:
        b = uniform((5000,), "float32", 0.0, 1.0, seed=seed, offset=offset)
        assert np.mean(a == b) < 0.01 and abs(np.corrcoef(a, b)[0, 1]) < 0.05


def test_uniform_writes_a_strided_view_in_row_major_order_only():
    store = pyaclnn.from_numpy(np.full(2 * 12 + 1, -1.0, np.float32))
    view = store.as_strided((3, 4), (2, 6), 1)          # a transposed, every-other-element view
    ops.InplaceUniform(view, 0.0, 1.0, 5, 0)
    full = store.numpy()
    want = RR.uniform(5, 0, 12, 0.0, 1.0, "float32").reshape(3, 4)
    got = np.array([[full[1 + 2 * r + 6 * c] for c in range(4)] for r in range(3)])
    np.testing.assert_array_equal(got, want)
    assert (full[0::2] == -1.0).all()


def test_uniform_equal_bounds_and_empty_tensor():
    assert (uniform((64,), "float32", 2.5, 2.5) == 2.5).all()
    assert uniform((0, 3), "float32", 0.0, 1.0).shape == (0, 3)


def test_uniform_validation_codes():
    u = ops.InplaceUniform
    assert code_of(u, pyaclnn.empty((4,), "float32"), 2.0, 1.0, 0, 0) == INVALID            # from > to
    assert code_of(u, pyaclnn.empty((4,), "bool"), 0.0, 1.0, 0, 0) == INVALID               # BOOL not in the list
    assert code_of(u, pyaclnn.empty((4,), "uint16"), 0.0, 1.0, 0, 0) == INVALID
    assert code_of(u, pyaclnn.empty((1,) * 9, "float32"), 0.0, 1.0, 0, 0) == INVALID        # more than 8 dims
    assert raw_null_status("aclnnInplaceUniformGetWorkspaceSize", 5) == NULLPTR


# ---- aclnnInplaceNormal -------------------------------------------------------------------------

def test_normal_float32_is_the_documented_stream_within_an_ulp():
    got = normal((4000,), "float32", 1.5, 0.5, seed=99, offset=8)
    want = RR.normal_fp32(99, 8, 4000, 1.5, 0.5)
    ulp = np.spacing(np.abs(want))
    assert (np.abs(got - want) <= ulp).all()
    assert np.mean(got == want) > 0.99


@pytest.mark.parametrize("name", NORMAL_DTYPES)
def test_normal_mean_std_and_tails(name):
    x = normal((N,), name, 0.5, 2.0, seed=4).astype(np.float64)
    if name not in R.FLOATS:                   # computed as FLOAT, then the NPU's Cast (toward zero, saturating)
        want = R.cast(RR.normal_fp32(4, 0, N, 0.5, 2.0), name).astype(np.float64)
        assert np.mean(x != want) < 1e-4       # an fp32 ulp apart only next to an integer
        return
    assert abs(x.mean() - 0.5) < 5 * 2.0 / np.sqrt(N) + (0.01 if name in ("float16", "bfloat16") else 0)
    assert abs(x.std() / 2.0 - 1) < 0.01 + (0.01 if name == "bfloat16" else 0)
    within1 = np.mean(np.abs(x - 0.5) < 2.0)
    assert abs(within1 - 0.6827) < 0.006                 # the normal's mass within one sigma
    assert 4 * 2.0 < np.abs(x - 0.5).max() < 6 * 2.0     # tails exist, but no wild values


def test_normal_deterministic_and_offsets_differ():
    a = normal((5000,), "float32", 0.0, 1.0, seed=3, offset=0)
    np.testing.assert_array_equal(a, normal((5000,), "float32", 0.0, 1.0, seed=3, offset=0))
    b = normal((5000,), "float32", 0.0, 1.0, seed=3, offset=12)
    assert np.mean(a == b) < 0.01 and abs(np.corrcoef(a, b)[0, 1]) < 0.05


def test_normal_validation_codes():
    n = ops.InplaceNormal
    assert code_of(n, pyaclnn.empty((4,), "float32"), 0.0, -1.0, 0, 0) == NULLPTR           # std < 0: the vendor's 161001
    assert code_of(n, pyaclnn.empty((4,), "uint16"), 0.0, 1.0, 0, 0) == INVALID
    assert code_of(n, pyaclnn.empty((1,) * 9, "float32"), 0.0, 1.0, 0, 0) == INVALID
    assert raw_null_status("aclnnInplaceNormalGetWorkspaceSize", 5) == NULLPTR


# ---- dropout ------------------------------------------------------------------------------------

def mask_bytes(n):
    return (n + 127) // 128 * 128 // 8


def gen_mask(shape, prob, seed=1, offset=0, prob_dtype="float32"):
    out = pyaclnn.empty((mask_bytes(int(np.prod(shape))),), "uint8")
    ops.DropoutGenMaskV2(list(shape), prob, seed, offset, prob_dtype, out)
    return out.numpy()


def test_gen_mask_is_the_documented_stream_and_keeps_one_minus_p():
    got = gen_mask((300, 200), 0.3, seed=21, offset=48)
    np.testing.assert_array_equal(got, RR.dropout_mask(21, 48, 0.3, got.size))
    bits = np.unpackbits(got, bitorder="little")
    assert abs(bits.mean() - 0.7) < 5 * np.sqrt(0.21 / bits.size)


def test_gen_mask_extremes():
    assert (gen_mask((1000,), 0.0) == 0xFF).all() and (gen_mask((1000,), 1.0) == 0).all()


def test_do_mask_scales_kept_elements_and_zeroes_the_rest():
    x = np.random.default_rng(2).standard_normal((7, 33)).astype(np.float32)
    mask = gen_mask(x.shape, 0.25, seed=5)
    out = np.zeros_like(x)
    got = ops.DropoutDoMask(x, mask, 0.25, out)
    keep = np.unpackbits(mask, bitorder="little")[:x.size].reshape(x.shape).astype(bool)
    want = np.where(keep, x / np.float32(0.75), np.float32(0))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_do_mask_half_dtypes_compute_in_fp32_and_round_once(name):
    x = R.cast(np.random.default_rng(3).standard_normal(256), name)
    mask = gen_mask(x.shape, 0.5, seed=9)
    got = ops.DropoutDoMask(x, mask, 0.5, np.zeros_like(x))
    keep = np.unpackbits(mask, bitorder="little")[:x.size].astype(bool)
    keep_h = np.float32(R.cast(np.array([0.5]), name)[0])
    want = R.cast(np.where(keep, x.astype(np.float32) / keep_h, np.float32(0)), name)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_dropout_v3_writes_gen_masks_mask_and_the_matching_output():
    x = np.random.default_rng(4).standard_normal((40, 50)).astype(np.float32)
    out, mask = np.zeros_like(x), np.zeros(mask_bytes(x.size), np.uint8)
    got, got_mask = ops.DropoutV3(x, None, 0.4, 77, 12, out, mask)
    np.testing.assert_array_equal(got_mask, gen_mask(x.shape, 0.4, seed=77, offset=12))
    keep = np.unpackbits(got_mask, bitorder="little")[:x.size].reshape(x.shape).astype(bool)
    np.testing.assert_array_equal(got, np.where(keep, x / np.float32(0.6), np.float32(0)))
    assert abs(keep.mean() - 0.6) < 0.03


def test_dropout_validation_codes():
    x, m = np.ones(100, np.float32), np.zeros(16, np.uint8)
    g, d, v3 = ops.DropoutGenMaskV2, ops.DropoutDoMask, ops.DropoutV3
    assert code_of(g, [100], 1.5, 0, 0, "float32", pyaclnn.empty((16,), "uint8")) == INVALID       # prob > 1
    assert code_of(g, [100], 0.5, 0, 0, "float32", pyaclnn.empty((15,), "uint8")) == INVALID       # mask size
    assert code_of(g, [100], 0.5, 0, 0, "float32", pyaclnn.empty((16,), "int8")) == INVALID        # not UINT8
    assert code_of(d, x, m, 0.5, np.zeros(100, np.float32)) == 0
    assert code_of(d, x, m[:15], 0.5, np.zeros(100, np.float32)) == INVALID                        # mask too small
    assert code_of(d, x.astype(np.float64), m, 0.5, np.zeros(100, np.float64)) == INVALID          # DOUBLE
    assert code_of(d, x, m, 0.5, np.zeros(99, np.float32)) == INVALID                              # out shape
    assert code_of(d, x, m, 0.5, np.zeros(100, np.int32)) == INVALID                               # cannot cast
    assert code_of(d, x, m, -0.1, np.zeros(100, np.float32)) == INVALID
    assert code_of(v3, x, None, 0.5, 0, 0, np.zeros(100, np.float32), np.zeros(15, np.uint8)) == INVALID
    assert code_of(v3, x, x, 0.5, 0, 0, np.zeros(100, np.float32), m) == INVALID                   # noise shape
    assert raw_null_status("aclnnDropoutDoMaskGetWorkspaceSize", 4) == NULLPTR
    assert raw_null_status("aclnnDropoutV3GetWorkspaceSize", 7) == NULLPTR


def test_gen_mask_on_a2_builds_the_probability_in_prob_data_type():
    code = """
        import pyaclnn
        from pyaclnn import ops
        from pyaclnn.errors import AclError
        def code(dt):
            try:
                ops.DropoutGenMaskV2([100], 0.5, 0, 0, dt, pyaclnn.empty((16,), "uint8")); return 0
            except AclError as e:
                return e.code
        print(code("float16"), code("int32"))
    """
    rc, out, err = helpers.run_python(code, {"PYACLNN_STUB_SOC": "Ascend910B4"})
    assert rc == 0, err
    assert out.split() == ["0", str(INNER_NULLPTR)]
