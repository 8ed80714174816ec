"""aclnnMaskedSelect and aclnnNonzeroV2, the operators whose output shape depends on the data, against
NumPy (x[mask], np.nonzero: an independent reference) and torch CPU: every self dtype of the vendor's
lists, broadcast and strided inputs, the real shape left on out's aclTensor (aclGetViewShape, what
torch_npu reads), and the vendor's validation codes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import helpers
import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from pyaclnn.ops._select_ops import view_shape
from _op_helpers import INVALID, NULLPTR, code_of, raw_null_status, strided
from test_elementwise_arith import sample, same_bits

RNG = np.random.default_rng(1516)
# self/out dtypes of aclnnMaskedSelect on Ascend 950 (the regbase list: A2's plus the unsigned types).
MS_950 = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
          "int64", "uint64", "bool"]
# aclnnNonzeroV2 on Ascend 950 (the vendor's non-910B list: no BF16).
NZ_950 = ["float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "bool"]


def npdt(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def values(name, shape):
    if name == "uint64":    # sample() draws through int64
        return RNG.integers(0, 2 ** 64, shape, dtype=np.uint64, endpoint=False)
    return sample(name, shape)


def mask_of(shape, p=0.5):
    return RNG.random(shape) < p


# ---- aclnnMaskedSelect --------------------------------------------------------------------------

@pytest.mark.parametrize("name", MS_950)
def test_masked_select_every_dtype(name):
    x, m = values(name, (5, 7)), mask_of((5, 7))
    same_bits(ops.masked_select(x, m), x[m])


@pytest.mark.parametrize("shapes", [((3, 1, 4), (2, 4)), ((4,), (3, 2, 4)), ((2, 3), ()), ((), (2, 3)), ((), ())])
def test_masked_select_broadcasts_self_and_mask(shapes):
    x, m = sample("float32", shapes[0]), mask_of(shapes[1])
    xb, mb = np.broadcast_arrays(x, m)
    same_bits(ops.masked_select(x, m), xb[mb])


def test_masked_select_uint8_mask_and_strided_views():
    x, m = sample("bfloat16", (6, 5)), mask_of((6, 5))
    got = ops.masked_select(strided(x, transpose=True), strided(m.astype(np.uint8)))   # Tensors in, Tensor out
    same_bits(got.numpy(), x[m])


def test_masked_select_all_false_and_all_true():
    x = sample("int32", (3, 4))
    assert ops.masked_select(x, np.zeros((3, 4), bool)).shape == (0,)
    same_bits(ops.masked_select(x, np.ones((3, 4), bool)), x.reshape(-1))


def test_masked_select_casts_self_to_out_dtype():
    x, m = RNG.integers(-1000, 1000, (4, 6)).astype(np.int32), mask_of((4, 6))
    out = pyaclnn.empty((24,), "float32")
    ops.MaskedSelect(x, m, out)
    k = int(m.sum())
    assert view_shape(out) == (k,)
    same_bits(out.numpy()[:k], x[m].astype(np.float32))


def test_the_real_shape_is_left_on_outs_acl_tensor_and_the_tail_is_untouched():
    x, m = np.arange(12, dtype=np.float32).reshape(3, 4), np.arange(4) % 2 == 0
    out = pyaclnn.from_numpy(np.full(12, -1.0, np.float32))
    ops.MaskedSelect(x, m, out)
    assert view_shape(out) == (6,)
    same_bits(out.numpy(), np.concatenate([x[:, ::2].reshape(-1), np.full(6, -1.0, np.float32)]))


def test_masked_select_device_tensors_in_device_tensor_out():
    x, m = sample("float16", (4, 4)), mask_of((4, 4))
    t = ops.masked_select(pyaclnn.from_numpy(x), pyaclnn.from_numpy(m))
    assert isinstance(t, pyaclnn.Tensor) and t.shape == (int(m.sum()),)
    same_bits(t.numpy(), x[m])


def test_masked_select_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x, m = sample("float32", (3, 5)), mask_of((5,))
    want = torch.masked_select(torch.from_numpy(x), torch.from_numpy(m)).numpy()
    same_bits(ops.masked_select(torch.from_numpy(x), torch.from_numpy(m)).numpy(), want)


def test_masked_select_validation_codes():
    x, m = np.zeros((3, 4), np.float32), np.ones((3, 4), bool)
    out = lambda n=12, dt=np.float32: np.zeros(n, dt)   # noqa: E731
    ms = ops.MaskedSelect
    assert code_of(ms, x, m, out()) == 0
    assert code_of(ms, x.astype(ml_dtypes.float8_e4m3fn), m, out(dt=ml_dtypes.float8_e4m3fn)) == INVALID  # self dtype
    assert code_of(ms, x, m.astype(np.float32), out()) == INVALID                  # mask must be BOOL or UINT8
    assert code_of(ms, x, m.astype(np.int8), out()) == INVALID
    assert code_of(ms, x, m, out(dt=ml_dtypes.float8_e5m2)) == INVALID             # out dtype
    assert code_of(ms, x, m, np.zeros((3, 4), np.float32)) == INVALID              # out must be 1-D
    assert code_of(ms, x, m, out(11)) == INVALID                                    # broadcast element count
    assert code_of(ms, x, np.ones((2, 4), bool), out()) == INVALID                  # no broadcast
    assert code_of(ms, np.zeros((1,) * 9, np.float32), np.ones(1, bool), out(1)) == INVALID   # more than 8 dims
    assert raw_null_status("aclnnMaskedSelectGetWorkspaceSize", 3) == NULLPTR


def test_masked_select_error_names_the_sizes():
    with pytest.raises(AclError) as e:
        ops.MaskedSelect(np.zeros((3, 4), np.float32), np.ones(4, bool), np.zeros(11, np.float32))
    assert e.value.code == INVALID and "11" in str(e.value) and "12" in str(e.value)


def test_the_a2_list_has_bf16_but_no_unsigned_types():
    code = """
        import numpy as np, ml_dtypes
        from pyaclnn import ops
        from pyaclnn.errors import AclError
        def code(dt):
            x = np.zeros(4, dt)
            try:
                ops.MaskedSelect(x, np.ones(4, bool), np.zeros(4, dt)); return 0
            except AclError as e:
                return e.code
        print(code(ml_dtypes.bfloat16), code(np.uint16), code(np.uint32), code(np.uint64), code(np.int16))
    """
    rc, out, err = helpers.run_python(code, {"PYACLNN_STUB_SOC": "Ascend910B4"})
    assert rc == 0, err
    assert out.split() == ["0", str(INVALID), str(INVALID), str(INVALID), "0"]


# ---- aclnnNonzeroV2 -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", NZ_950)
def test_nonzero_v2_every_dtype(name):
    x = values(name, (4, 6))
    if name != "bool":
        x.reshape(-1)[RNG.random(24) < 0.4] = 0     # zeros (and -0.0 among the floats' specials)
    got = ops.nonzero_v2(x)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.array(np.nonzero(x)))


def test_nonzero_v2_counts_nan_and_not_negative_zero():
    x = np.array([0.0, -0.0, np.nan, 1e-45, -np.inf], np.float32)
    np.testing.assert_array_equal(ops.nonzero_v2(x), [[2, 3, 4]])


@pytest.mark.parametrize("shape", [(7,), (2, 3, 4), (1, 1, 5, 1), (2, 0, 3)])
def test_nonzero_v2_shapes_and_strided_self(shape):
    x = (RNG.random(shape) < 0.3).astype(np.uint8)
    got = ops.nonzero_v2(strided(x)).numpy()
    np.testing.assert_array_equal(got, np.array(np.nonzero(x)).reshape(len(shape), -1))


def test_nonzero_v2_leaves_rank_by_count_on_out():
    x = np.array([[0, 3], [4, 0], [0, 0]], np.int32)
    out = pyaclnn.empty((2, 6), "int64")
    ops.NonzeroV2(x, out)
    assert view_shape(out) == (2, 2)
    np.testing.assert_array_equal(out.numpy().reshape(-1)[:4], [0, 1, 1, 0])   # contiguous in the real shape


def test_nonzero_v2_without_non_zeros_leaves_rank_by_0_with_torchs_strides():
    """No non-zero element: out's view becomes [rank, 0], whose contiguous strides count the zero-size
    dimension as 1 -- (1, 1), as torch gives shape (2, 0)."""
    import ctypes
    from pyaclnn import capi
    out = pyaclnn.empty((2, 6), "int64")
    ops.NonzeroV2(np.zeros((2, 3), np.float32), out)
    p, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
    assert capi.aclGetViewStrides(out.acl_handle(), ctypes.byref(p), ctypes.byref(n)) == 0
    assert view_shape(out) == (2, 0) and [p[i] for i in range(n.value)] == [1, 1]


def test_nonzero_v2_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(sample("float32", (5, 3)))
    np.testing.assert_array_equal(ops.nonzero_v2(x).numpy(), torch.nonzero(x).t().numpy())


def test_nonzero_v2_out_too_small_is_a_device_fault():
    with pytest.raises(AclError) as e:
        ops.NonzeroV2(np.ones((2, 3), np.float32), np.zeros((2, 2), np.int64))
    assert "fewer than" in str(e.value)


def test_nonzero_v2_validation_codes():
    x = np.ones((2, 3), np.float32)
    nz = ops.NonzeroV2
    assert code_of(nz, x, np.zeros((2, 6), np.int64)) == 0
    assert code_of(nz, x, np.zeros((2, 6), np.int32)) == INVALID                   # out must be INT64
    assert code_of(nz, x.astype(ml_dtypes.bfloat16), np.zeros((2, 6), np.int64)) == INVALID   # no BF16 on 950
    assert code_of(nz, np.ones((1,) * 9, np.float32), np.zeros((9, 1), np.int64)) == INVALID  # more than 8 dims
    assert raw_null_status("aclnnNonzeroV2GetWorkspaceSize", 2) == NULLPTR


# ---- repeated layouts ---------------------------------------------------------------------------
# A repeatable executor keeps its own aclTensor descriptors: the real shape of a data-dependent launch
# would land on the executor's descriptor, and every call would return the full-size output.

@pytest.mark.parametrize("kind", ["numpy", "tensor"])
def test_data_dependent_shapes_are_right_on_every_call_of_a_repeated_layout(kind):
    wrap = (lambda a: a) if kind == "numpy" else pyaclnn.from_numpy
    x = np.arange(200, dtype=np.float32)
    for p in (0.5, 0.1, 0.9, 0.5, 0.0, 1.0):        # repeated layouts: a reused executor would be wrong
        m = mask_of((200,), p)
        got = ops.masked_select(wrap(x), wrap(m))
        got = got if kind == "numpy" else got.numpy()
        assert got.shape == (int(m.sum()),)
        same_bits(got, x[m])
        nz = ops.nonzero_v2(wrap(m.reshape(20, 10)))
        nz = nz if kind == "numpy" else nz.numpy()
        np.testing.assert_array_equal(nz, np.array(np.nonzero(m.reshape(20, 10))))


def test_the_generic_call_leaves_the_real_shape_on_out():
    x = pyaclnn.from_numpy(np.arange(12, dtype=np.float32))
    for step in (2, 3, 4, 2):
        m = pyaclnn.from_numpy(np.arange(12) % step == 0)
        out = pyaclnn.empty((12,), "float32")     # (out's aclTensor keeps the shape of its launch)
        ops.MaskedSelect(x, m, out)
        assert view_shape(out) == (len(range(0, 12, step)),)


def test_a_data_dependent_operator_cannot_be_prepared():
    x = pyaclnn.from_numpy(np.arange(4, dtype=np.float32))
    m = pyaclnn.from_numpy(np.array([1, 0, 1, 0], bool))
    with pytest.raises(NotImplementedError, match="output shape from the data"):
        ops.prepare("MaskedSelect", x, m, pyaclnn.empty((4,), "float32"))
