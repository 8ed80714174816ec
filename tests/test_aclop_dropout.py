"""The byte-mask dropout of the aclop path (native_stubs/src/compat/aclop/dropout_v3.c): DropOutGenMaskV3 and
DropOutDoMaskV3, what torch_npu's dropout_with_byte_mask sends through aclopCompileAndExecute on Atlas A2.
GenMaskV3 writes one byte per element (1 = keep with the keep probability `prob`; class s: the keep rate is
checked); DoMaskV3 keeps element k when bit 0 of mask byte k is set and scales it by the fp32 reciprocal of
keep_prob, one rounding to x's dtype (the vendor's kernel; class b: checked bit for bit)."""
from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from _math_ops import torch_npu_run
from pyaclnn import capi
from test_aclop import INVALID_PARAM, _device, _lib, dims, message, run  # noqa: F401  (run: a fixture)

FLOAT, FLOAT16, INT32, UINT8, INT64, BF16 = 0, 1, 3, 4, 9, 27
ND, HOST = 2, 1
DT = {"float32": (FLOAT, np.float32), "float16": (FLOAT16, np.float16), "bfloat16": (BF16, ml_dtypes.bfloat16)}


@pytest.fixture(scope="module")
def acl():
    lib = _lib("libascendcl.so")
    lib.aclSetTensorPlaceMent.restype, lib.aclSetTensorPlaceMent.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]
    return lib


class Op:
    """Descriptions and buffers of one call, destroyed together."""

    def __init__(self, acl):
        self.acl, self.descs, self.bufs, self.keep = acl, [], [], []

    def tensor(self, dtype, shape, arr, host=False):
        d = self.acl.aclCreateTensorDesc(dtype, len(shape), dims(*shape), ND)
        if host:
            assert self.acl.aclSetTensorPlaceMent(d, HOST) == 0
            self.keep.append(arr)
            b = self.acl.aclCreateDataBuffer(arr.ctypes.data, arr.nbytes)
        else:
            b = self.acl.aclCreateDataBuffer(arr.data_ptr, arr.nbytes)
        self.descs.append(d)
        self.bufs.append(b)
        return d, b

    def close(self):
        for d in self.descs:
            self.acl.aclDestroyTensorDesc(d)
        for b in self.bufs:
            self.acl.aclDestroyDataBuffer(b)


def gen_mask(acl, run, shape, keep, seed=5, seed2=0, prob_dtype="float16"):
    code, npdt = DT[prob_dtype]
    op = Op(acl)
    n = int(np.prod(shape))
    y = _device(np.full(n, 7, np.uint8))
    ds, bs = op.tensor(INT64, (len(shape),), np.array(shape, np.int64), host=True)
    dp, bp = op.tensor(code, (1,), np.array([keep], npdt), host=True)
    dy, by = op.tensor(UINT8, (n,), y)
    attr = acl.aclopCreateAttr()
    acl.aclopSetAttrInt(attr, b"seed", seed)
    acl.aclopSetAttrInt(attr, b"seed2", seed2)
    rc = run(b"DropOutGenMaskV3", [ds, dp], [bs, bp], [dy], [by], attr)
    assert capi.aclrtSynchronizeDevice() == 0
    acl.aclopDestroyAttr(attr)
    op.close()
    return rc, y.numpy()


def do_mask(acl, run, x, mask, keep, name="float16", keep_dtype=None, keep_host=True):
    code, npdt = DT[name]
    op = Op(acl)
    xd, yd, md = _device(x.astype(npdt)), _device(np.zeros(x.shape, npdt)), _device(mask)
    dx, bx = op.tensor(code, x.shape, xd)
    dm, bm = op.tensor(UINT8, mask.shape, md)
    kc, kdt = DT[keep_dtype or name]
    kp = np.array([keep], kdt)
    dk, bk = op.tensor(kc, (1,), kp if keep_host else _device(kp), host=keep_host)
    dy, by = op.tensor(code, x.shape, yd)
    rc = run(b"DropOutDoMaskV3", [dx, dm, dk], [bx, bm, bk], [dy], [by])
    assert capi.aclrtSynchronizeDevice() == 0
    op.close()
    return rc, yd.numpy()


def test_gen_mask_v3_one_byte_per_element_keeps_prob(acl, run):
    rc, m = gen_mask(acl, run, (200, 1000), 0.8)
    assert rc == 0, message()
    assert set(np.unique(m)) == {0, 1}
    assert abs(m.mean() - 0.8) < 0.005                      # 200k draws: 5 sigma is about 0.0045
    rc2, m2 = gen_mask(acl, run, (200, 1000), 0.8)
    assert rc2 == 0 and not np.array_equal(m, m2)           # stateful: a new mask per launch for one seed
    assert gen_mask(acl, run, (64,), 1.0)[1].min() == 1 and gen_mask(acl, run, (64,), 0.0)[1].max() == 0
    assert gen_mask(acl, run, (300,), 0.5, seed=0, seed2=0, prob_dtype="float32")[0] == 0   # "a random seed"


@pytest.mark.parametrize("name", ["float16", "float32", "bfloat16"])
def test_do_mask_v3_keeps_bit_0_and_scales_by_the_fp32_reciprocal(acl, run, name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 33)).astype(np.float32)
    mask = rng.integers(0, 4, x.shape).astype(np.uint8)      # 2 and 3: only bit 0 counts
    keep = 0.7
    rc, y = do_mask(acl, run, x, mask, keep, name)
    assert rc == 0, message()
    npdt = DT[name][1]
    kp = np.float32(np.array(keep, npdt))                    # keep_prob as x's dtype holds it
    want = np.where(mask & 1, x.astype(npdt).astype(np.float32) * (np.float32(1) / kp), np.float32(0)).astype(npdt)
    assert y.tobytes() == want.tobytes()
    assert not do_mask(acl, run, x, mask, 0.0, name)[1].astype(np.float32).any()
    assert do_mask(acl, run, x, mask, 1.0, name)[1].tobytes() == x.astype(npdt).tobytes()


def test_refusals_name_their_reason(acl, run):
    x, m = np.ones((4, 4), np.float32), np.ones((4, 4), np.uint8)
    assert do_mask(acl, run, x, m, 0.5, "float16", keep_dtype="float32")[0] == INVALID_PARAM
    assert "keep_prob must have x's dtype" in message()
    assert do_mask(acl, run, x, m, 1.5, "float32")[0] == INVALID_PARAM and "must be in [0, 1]" in message()
    assert do_mask(acl, run, x, m[:3], 0.5, "float32")[0] == INVALID_PARAM and "one byte per element" in message()
    assert do_mask(acl, run, x, m, 0.5, "float32", keep_host=False)[0] == INVALID_PARAM
    assert "host (compile-time) input" in message()
    assert gen_mask(acl, run, (8,), -0.5, prob_dtype="float32")[0] == INVALID_PARAM


TORCH_A2 = r'''
import torch, torch_npu
torch.manual_seed(5)
x = torch.randn(64, 48, dtype=torch.float16)
xn = x.npu().requires_grad_(True)
out, mask = torch.ops.npu._dropout_with_byte_mask(xn, 0.25)
out.backward(torch.ones_like(out))
OUT["x"], OUT["out"], OUT["mask"], OUT["grad"] = (to_np(t).tolist() for t in (x, out, mask, xn.grad))
OUT["eval"] = bool(torch.equal(torch_npu.dropout_with_byte_mask(xn, 0.25, train=False).cpu(), x))
'''


def test_torch_npu_dropout_with_byte_mask_on_atlas_a2():
    out = torch_npu_run(TORCH_A2, {}, soc="Ascend910B4")
    x, y, m, g = (np.array(out[k], np.float16) for k in ("x", "out", "mask", "grad"))
    m = m.astype(np.uint8)
    assert set(np.unique(m)) <= {0, 1} and abs(m.mean() - 0.75) < 0.05
    k = np.float32(np.float16(0.75))
    assert y.tobytes() == np.where(m, x.astype(np.float32) * (np.float32(1) / k), 0).astype(np.float16).tobytes()
    assert g.tobytes() == np.where(m, np.float32(1) / k, 0).astype(np.float16).tobytes()
    assert out["eval"]
