"""The aclop operator Quantize (native_stubs/src/compat/aclop/quantize.c): what torch_npu's npu_quantize sends through
aclopCompileAndExecute with its default div_mode=True. y = sat(rint(fp32(x) / fp32(scale) + fp32(zero_point))),
per channel along `axis` or per tensor, to int8 / uint8 / int32 (the steps of the vendor's arch35 kernel,
hicann/ops-nn quant/quantize; class b: checked bit for bit against the NumPy steps below)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from _math_ops import torch_npu_run
from pyaclnn import capi
from test_aclop import INVALID_PARAM, _device, message, run  # noqa: F401  (run: a fixture)
from test_aclop_dropout import Op, acl  # noqa: F401  (acl: a fixture)

FLOAT, FLOAT16, INT8, INT32, UINT8, BF16 = 0, 1, 2, 3, 4, 27
UNDEFINED = -1
NP = {FLOAT: np.float32, FLOAT16: np.float16, BF16: ml_dtypes.bfloat16, INT8: np.int8, UINT8: np.uint8,
      INT32: np.int32}
QNAME = {INT8: b"torch.qint8", UINT8: b"torch.quint8", INT32: b"torch.qint32"}
RANGE = {INT8: (-128, 127), UINT8: (0, 255), INT32: (-2 ** 31, 2 ** 31 - 1)}


def reference(x, scales, zp, axis, ydt):
    """The kernel's steps in NumPy: fp32 operands, one fp32 division, one fp32 addition, round half to even,
    saturate; NaN -> 0."""
    shape = [1] * x.ndim
    if scales.size > 1:
        shape[axis] = scales.size
    v = x.astype(np.float32) / scales.astype(np.float32).reshape(shape)
    if zp is not None:
        v = (v + zp.astype(np.float32).reshape(shape)).astype(np.float32)
    lo, hi = RANGE[ydt]
    r = np.clip(np.nan_to_num(np.rint(v.astype(np.float64)), nan=0.0), lo, hi)
    return r.astype(NP[ydt])


def quantize(acl, run, x, xdt, scales, sdt, zp, zdt, ydt, axis=1, name=None, yshape=None):
    op = Op(acl)
    held = [_device(x), _device(scales)]          # the device memory lives until the call has run
    dx, bx = op.tensor(xdt, x.shape, held[0])
    ds, bs = op.tensor(sdt, scales.shape, held[1])
    if zp is None:             # torch_npu's empty input
        dz = acl.aclCreateTensorDesc(UNDEFINED, 0, None, 2)
        bz = acl.aclCreateDataBuffer(None, 0)
        op.descs.append(dz)
        op.bufs.append(bz)
    else:
        held.append(_device(zp))
        dz, bz = op.tensor(zdt, zp.shape, held[-1])
    y = _device(np.zeros(yshape or x.shape, NP[ydt]))
    dy, by = op.tensor(ydt, yshape or x.shape, y)
    attr = acl.aclopCreateAttr()
    if name is not False:
        acl.aclopSetAttrString(attr, b"dtype", name or QNAME[ydt])
    acl.aclopSetAttrInt(attr, b"axis", axis)
    rc = run(b"Quantize", [dx, ds, dz], [bx, bs, bz], [dy], [by], attr)
    assert capi.aclrtSynchronizeDevice() == 0
    acl.aclopDestroyAttr(attr)
    op.close()
    return rc, y.numpy()


@pytest.mark.parametrize("xdt", [FLOAT, FLOAT16, BF16])
@pytest.mark.parametrize("ydt, zdt", [(INT8, INT8), (UINT8, UINT8), (INT32, INT32), (INT8, None), (INT8, BF16)])
@pytest.mark.parametrize("axis, per_tensor", [(1, False), (0, False), (2, False), (1, True)])
def test_bit_identical_to_the_kernel_steps(acl, run, xdt, ydt, zdt, axis, per_tensor):
    rng = np.random.default_rng(xdt * 100 + ydt * 10 + axis)
    x = (rng.standard_normal((3, 4, 5)) * 40).astype(NP[xdt])
    x.flat[:4] = [np.nan, np.inf, -np.inf, 0.5]
    n = 1 if per_tensor else x.shape[axis]
    scales = rng.uniform(0.05, 2.0, n).astype(np.float32)
    zp = None if zdt is None else rng.integers(0, 20, n).astype(NP[zdt])
    rc, got = quantize(acl, run, x, xdt, scales, FLOAT, zp, zdt, ydt, axis)
    assert rc == 0, message()
    want = reference(x, scales, zp, axis, ydt)
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)


def test_halves_round_to_even_after_the_offset_is_added(acl, run):
    # 0.5 + 1 = 1.5 -> 2 (rounding after the add; rounding first would give 0 + 1 = 1), 2.5 + 0 -> 2, -0.5 -> -0
    x = np.array([[0.5, 2.5, -0.5, 3.5]], np.float32)
    zp = np.array([1, 0, 0, 0], np.int32)
    rc, got = quantize(acl, run, x, FLOAT, np.ones(4, np.float32), FLOAT, zp, INT32, INT32, axis=1)
    assert rc == 0 and got.tolist() == [[2, 2, 0, 4]]


def test_refusals_name_their_reason(acl, run):
    x = np.ones((2, 3), np.float32)
    s = np.ones(3, np.float32)
    cases = [
        (dict(name=b"torch.qint16"), 'dtype "torch.qint16" is not'),
        (dict(name=False), "required attribute dtype"),
        (dict(name=b"torch.quint8"), "is not the one dtype"),
        (dict(axis=2), "axis 2 is out of range"),
        (dict(axis=0), "scales must hold 1 or x.shape[axis] (2) values: it holds 3"),
        (dict(yshape=(3, 3)), "y must have x's element count 6"),
    ]
    for kwargs, words in cases:
        rc, _ = quantize(acl, run, x, FLOAT, s, FLOAT, None, None, INT8, **kwargs)
        assert rc == INVALID_PARAM and words in message(), (kwargs, message())
    rc, _ = quantize(acl, run, x.astype(np.int32), INT32, s, FLOAT, None, None, INT8)
    assert rc == INVALID_PARAM and "x must be FLOAT, FLOAT16 or BF16" in message()
    rc, _ = quantize(acl, run, x, FLOAT, s, FLOAT, np.ones(2, np.int8), INT8, INT8)
    assert rc == INVALID_PARAM and "zero_points must hold as many values as scales (3): it holds 2" in message()


TORCH = r'''
import torch, torch_npu
rng = np.random.default_rng(3)
for i, (xdt, qdt, axis, zpdt) in enumerate([(torch.float32, torch.qint8, 1, torch.int8),
                                             (torch.float16, torch.quint8, 2, torch.uint8),
                                             (torch.float32, torch.qint32, 0, torch.int32),
                                             (torch.float32, torch.qint8, -1, None)]):
    x = torch.from_numpy((rng.standard_normal((3, 4, 5)) * 30).astype(np.float32)).to(xdt)
    n = x.shape[axis]
    s = torch.from_numpy(rng.uniform(0.1, 2.0, n).astype(np.float32))
    z = None if zpdt is None else torch.from_numpy(rng.integers(0, 10, n).astype(np.int32)).to(zpdt)
    y = torch_npu.npu_quantize(x.npu(), s.npu(), None if z is None else z.npu(), qdt, axis)
    OUT[str(i)] = [to_np(x).astype(np.float32).tolist(), s.numpy().tolist(), None if z is None else z.numpy().tolist(),
                   axis, str(y.dtype), y.cpu().numpy().tolist()]
'''


def test_torch_npu_npu_quantize_default_div_mode_goes_through_quantize_on_atlas_a2():
    # (on the 950 torch_npu calls aclnnQuantize instead, which the emulator lacks: "aclnnQuantize ... not found")
    out = torch_npu_run(TORCH, {}, soc="Ascend910B4")
    ydt = {"torch.int8": INT8, "torch.uint8": UINT8, "torch.int32": INT32}
    assert len(out) == 4
    for x, s, z, axis, dtype, y in out.values():
        x = np.array(x, np.float32)
        want = reference(x, np.array(s, np.float32), None if z is None else np.array(z), axis % 3, ydt[dtype])
        assert np.array_equal(np.array(y), want), (dtype, axis)
