"""aclnnNpuFormatCast and aclnnNpuFormatCastCalculateSizeAndFormat (native_stubs/src/ops/conversion/format_cast.toml):
the NPU's private blocked layouts against NumPy references written from the vendor's documented layouts
(hicann/ops-math docs/zh/context/data_format.md, conversion/npu_format_cast/docs/aclnnNpuFormatCast.md):

  FRACTAL_NZ   (..., n, m)      -> (..., ceil(m/C0), ceil(n/16), 16, C0)      element (i, j) at [j//C0][i//16][i%16][j%C0]
  NC1HWC0      NCHW / NHWC      -> (N, C1, H, W, C0)
  NDC1HWC0     NCDHW / NDHWC    -> (N, D, C1, H, W, C0)
  FRACTAL_Z    NCHW / HWCN      -> (C1*H*W, N1, 16, C0)                       rows (c1, h, w)
  FRACTAL_Z_3D NCDHW / DHWCN    -> (D*C1*H*W, N1, 16, C0)                     rows (d, c1, h, w)

with zero padding, bit for bit (the data are random bit patterns of each dtype, moved as codes), round trips back
to the public layout, hand-worked tiles, the shapes and actual formats CalculateSizeAndFormat reports (the doc's
table), every dtype of the vendor's lists (Ascend 950 here, Atlas A2 in one child, where also the 4-d / 5-d
layouts run), the validation codes and messages, and torch_npu's npu_format_cast on the emulator."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import helpers
from _math_ops import torch_npu_run

A2 = "Ascend910B4"

# The code of every step is shared by this process and the A2 child: tensors are made from raw element codes
# (uint8 / uint16 / uint32 carriers; 4-bit types two per byte, element 2k in the low nibble), so every dtype
# moves the same way and the comparison is of bits.
SOURCE = r'''
import ctypes, os
import numpy as np
import pyaclnn
from pyaclnn import _loader, ops
from pyaclnn.errors import AclError

ND, NCHW, NHWC, NC1HWC0, FZ, HWCN, NDHWC, NZ, NCDHW, DHWCN, NDC1HWC0, FZ3D, NCL = \
    2, 0, 1, 3, 4, 16, 27, 29, 30, 31, 32, 33, 47
NZ16, NZ32 = 50, 51
BITS = {"int8": 8, "uint8": 8, "float32": 32, "float16": 16, "bfloat16": 16, "int32": 32, "uint32": 32,
        "float8_e4m3fn": 8, "float4_e2m1": 4, "hifloat8": 8, "float4_e1m2": 4, "float64": 64}
ACL = {"float32": 0, "float16": 1, "int8": 2, "int32": 3, "uint8": 4, "uint32": 8, "bfloat16": 27,
       "hifloat8": 34, "float8_e4m3fn": 36, "float4_e2m1": 40, "float4_e1m2": 41, "float64": 11}
CARRIER = {4: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_LIB = ctypes.CDLL(os.path.join(_loader.stub_library_dir(), "libopapi.so"))
_CALC = _LIB.aclnnNpuFormatCastCalculateSizeAndFormat
_CALC.restype = ctypes.c_int
_CALC.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
                  ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_int)]
_FREE = ctypes.CDLL(None).free
_FREE.argtypes = [ctypes.c_void_p]
_RNG = np.random.default_rng(2929)


def codes(name, shape):
    b = BITS[name]
    return _RNG.integers(0, 2 ** min(b, 32), shape, dtype=np.uint64).astype(CARRIER[b])


def pack(c, bits):
    c = np.ascontiguousarray(c).reshape(-1)
    if bits == 4:
        c = np.concatenate([c, np.zeros(c.size % 2, c.dtype)])
        return (c[0::2] | (c[1::2] << 4)).astype(np.uint8)
    return c.view(np.uint8)


def unpack(raw, bits, n):
    if bits == 4:
        return np.stack([raw & 15, raw >> 4], -1).reshape(-1)[:n].astype(np.uint8)
    return raw.view(CARRIER[bits])[:n]


def tensor(c, name, shape, fmt, storage=None, n_store=None):
    """A device tensor of `name` holding the codes c (view `shape`, format, storage dims); and its bytes."""
    bits = BITS[name]
    n = int(np.prod(n_store if n_store is not None else c.size))
    raw = np.zeros(max((n * bits + 7) // 8, 1), np.uint8)
    body = pack(c, bits)
    raw[:body.size] = body
    mem = pyaclnn.from_numpy(raw)
    t = pyaclnn.Tensor(mem.memory, shape, name, format=fmt,
                       storage_dims=tuple(storage) if storage is not None else tuple(shape))
    return t, mem


def calc(t, dst_format, additional):
    """aclnnNpuFormatCastCalculateSizeAndFormat: (status, storage shape, actual format)."""
    p, n, fmt = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64(), ctypes.c_int(-7)
    rc = _CALC(t.acl_handle(), dst_format, additional, ctypes.byref(p), ctypes.byref(n), ctypes.byref(fmt))
    shape = [p[i] for i in range(n.value)] if rc == 0 else None
    if rc == 0:
        _FREE(p)
    return rc, shape, fmt.value


def cast(c, name, shape, src_fmt, dst_fmt, additional=-1):
    """Public codes -> the private layout and back: (storage shape, actual format, storage codes, codes back)."""
    bits = BITS[name]
    src, _ = tensor(c, name, shape, src_fmt)
    rc, store, actual = calc(src, dst_fmt, additional)
    assert rc == 0, (name, shape, src_fmt, dst_fmt, rc)
    dst, dmem = tensor(np.zeros(0, CARRIER[bits]), name, shape, actual, store, store)
    ops.NpuFormatCast(src, dst)
    n = int(np.prod(store))
    stored = unpack(dmem.numpy(), bits, n).reshape(store)
    back_t, bmem = tensor(np.zeros(0, CARRIER[bits]), name, shape, src_fmt, None, int(np.prod(shape)))
    rc2, back_shape, back_fmt = calc(dst, ND if dst_fmt == NZ else src_fmt, -1)
    if rc2 != 0:
        return store, actual, stored, (rc2, "aclnnNpuFormatCastCalculateSizeAndFormat")
    assert (back_shape == list(shape) or src_fmt == NHWC), (rc2, back_shape)   # CalcToNHWC: N,C,H,W
    code, msg = status(ops.NpuFormatCast, dst, back_t)
    if code != 0:
        return store, actual, stored, (code, msg)
    back = unpack(bmem.numpy(), bits, int(np.prod(shape))).reshape(shape)
    return store, actual, stored, back


def status(fn, *args):
    try:
        fn(*args)
    except AclError as exc:
        return exc.code, str(exc)
    return 0, ""
'''
exec(SOURCE, globals())


# ---- the references: the documented layouts, from the canonical NCDHW order -----------------------------------

def ceil(a, b):
    return -(-a // b)


def nz_ref(x, c0, n0=16):
    *lead, n, m = x.shape
    c1, n1 = ceil(m, c0), ceil(n, n0)
    p = np.zeros((*lead, n1 * n0, c1 * c0), x.dtype)
    p[..., :n, :m] = x
    k = len(lead)
    return p.reshape(*lead, n1, n0, c1, c0).transpose(*range(k), k + 2, k, k + 1, k + 3)


TO_NCDHW = {NCHW: (0, 1, 2, 3), NHWC: (0, 3, 1, 2), HWCN: (3, 2, 0, 1),
            NCDHW: (0, 1, 2, 3, 4), NDHWC: (0, 4, 1, 2, 3), DHWCN: (4, 3, 0, 1, 2)}


def blocked_ref(x, fmt, to, c0):
    """x in public format `fmt` -> NC1HWC0 / NDC1HWC0 / FRACTAL_Z / FRACTAL_Z_3D with C0 = c0."""
    x = x.transpose(TO_NCDHW[fmt])
    if x.ndim == 4:
        x = x[:, :, None]                                     # D = 1
    n, c, d, h, w = x.shape
    c1, n1 = ceil(c, c0), ceil(n, 16)
    p = np.zeros((n1 * 16, c1 * c0, d, h, w), x.dtype)
    p[:n, :c] = x
    if to in (NC1HWC0, NDC1HWC0):
        q = p[:n].reshape(n, c1, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2)   # N D C1 H W C0
        return q[:, 0] if to == NC1HWC0 else q
    q = p.reshape(n1, 16, c1, c0, d, h, w).transpose(4, 2, 5, 6, 0, 1, 3)  # D C1 H W N1 N0 C0
    return q.reshape(d * c1 * h * w, n1, 16, c0)


def same(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.array_equal(a, b)


# ---- CalculateSizeAndFormat: the doc's table on Ascend 950 --------------------------------------------------

# (dtype, shape, additionalDtype) -> (storage shape, actual format)
CALC_950 = [
    ("int8", (40, 70), ACL["int8"], [3, 3, 16, 32], NZ),
    ("int32", (64, 128), ACL["float16"], [8, 4, 16, 16], NZ16),
    ("float32", (3, 20, 33), ACL["bfloat16"], [3, 3, 2, 16, 16], NZ16),
    ("float32", (20, 33), ACL["float8_e4m3fn"], [2, 2, 16, 32], NZ32),
    ("int32", (20, 33), ACL["int8"], [2, 2, 16, 32], NZ32),
    ("float16", (2, 3, 20, 33), -1, [2, 3, 3, 2, 16, 16], NZ),
    ("bfloat16", (20, 33), ACL["bfloat16"], [3, 2, 16, 16], NZ),
    ("float32", (20, 33), ACL["float32"], [5, 2, 16, 8], NZ),
    ("float4_e2m1", (20, 130), -1, [3, 2, 16, 64], NZ),
    ("uint8", (5, 40), -1, [2, 1, 16, 32], NZ),
]


@pytest.mark.parametrize("name,shape,add,want,fmt", CALC_950, ids=[f"{c[0]}-{c[2]}" for c in CALC_950])
def test_calculate_size_and_format_950(name, shape, add, want, fmt):
    t, _ = tensor(codes(name, shape), name, shape, ND)
    assert calc(t, NZ, add) == (0, want, fmt)


# ---- every dtype of the 950 list: ND -> NZ (each C0 the vendor picks) and back ---------------------------------

LIST_950 = ["int8", "float32", "float16", "bfloat16", "int32", "float8_e4m3fn", "float4_e2m1", "hifloat8", "uint8",
            "float4_e1m2"]
# int32 takes an additionalDtype of float16 / bfloat16 / int8 only (ValidateQuantMatmulParams refuses its own)
ROUND_950 = [(n, -1) for n in LIST_950 if n != "int32"] + [("float32", ACL["float16"]), ("float32", ACL["float8_e4m3fn"]),
                                            ("int32", ACL["bfloat16"]), ("int32", ACL["int8"])]


@pytest.mark.parametrize("name,add", ROUND_950, ids=[f"{n}-{a}" for n, a in ROUND_950])
def test_nd_nz_round_trip_every_950_dtype(name, add):
    shape = (2, 37, 70) if add == -1 else (37, 70)
    c = codes(name, shape)
    store, actual, stored, back = cast(c, name, shape, ND, NZ, add)
    c0 = store[-1]
    assert c0 == {4: 64, 8: 32, 16: 16, 32: 8}[BITS[name]] if add == -1 else c0 in (16, 32)
    same(stored, nz_ref(c, c0))
    if name == "hifloat8":                        # INPUT_DTYPE_FORMAT_NZ_TO_ND_SUPPORT_LIST has no way back for it
        assert back[0] == 161002 and "Do not support converting [FRACTAL_NZ] to ND when srcDtype is" in back[1]
    elif name == "float4_e1m2":                   # ValidNzShape expects C0 32 (32 bytes / 1), CalcNdToNz made 64
        assert back == (161002, "aclnnNpuFormatCastCalculateSizeAndFormat")
    else:
        same(back, c)


def test_hand_worked_tiles():
    # fp16 (20, 33): C0 16, storage (3, 2, 16, 16); element (19, 32) sits in tile [2][1] at row 3, column 0
    c = np.arange(20 * 33, dtype=np.uint16).reshape(20, 33) + 1
    store, actual, stored, _ = cast(c, "float16", (20, 33), ND, NZ)
    assert (store, actual) == ([3, 2, 16, 16], NZ)
    assert stored[2, 1, 3, 0] == c[19, 32] and stored[0, 0, 0, :4].tolist() == [1, 2, 3, 4]
    assert stored[1, 0, 5, 0] == c[5, 16] and stored[0, 1, 3, 15] == c[19, 15]
    assert not stored[2, :, :, 1:].any() and not stored[:, 1, 4:].any()        # the padding is zero
    # int8 (40, 70): C0 32, (3, 3, 16, 32); element (39, 69) at [69 // 32][39 // 16][39 % 16][69 % 32]
    c = codes("int8", (40, 70)) | 1
    _, _, stored, _ = cast(c, "int8", (40, 70), ND, NZ)
    assert stored[2, 2, 7, 5] == c[39, 69] and stored[2, 2, 8:].sum() == 0 and stored[2, :, :, 6:].sum() == 0
    # fp4: C0 64 nibbles, element 2k in the low nibble of byte k
    c = (np.arange(3 * 70) % 15 + 1).astype(np.uint8).reshape(3, 70)
    store, _, stored, _ = cast(c, "float4_e2m1", (3, 70), ND, NZ)
    assert store == [2, 1, 16, 64] and stored[1, 0, 2, 5] == c[2, 69] and stored[1, 0, 2, 6:].sum() == 0


def test_nd_to_nz_from_a_view_and_ncl():
    # NCL (a 3-d torch_npu tensor) takes the ND path; its dims (..., n, m) as ND's
    c = codes("float16", (3, 17, 40))
    store, actual, stored, back = cast(c, "float16", (3, 17, 40), NCL, NZ)
    assert (store, actual) == ([3, 3, 2, 16, 16], NZ)
    same(stored, nz_ref(c, 16))
    same(back, c)


# ---- Ascend 950: what the vendor refuses ------------------------------------------------------------------

def nz_of(name, shape, fmt=NZ, store=None):
    c = codes(name, shape)
    src, _ = tensor(c, name, shape, ND)
    rc, st, _ = calc(src, NZ, -1)
    st = store or st
    return tensor(np.zeros(0, CARRIER[BITS[name]]), name, shape, fmt, st, max(np.prod(st), np.prod(shape)))[0]


def nd(name, shape, fmt=ND):
    return tensor(codes(name, shape), name, shape, fmt)[0]


def test_950_validation():
    assert calc(nd("int32", (4, 4)), NZ, -1)[0] == 161002                                # int32 as its own C0 type

    # CalculateSizeAndFormat
    assert calc(nd("float32", (2, 3, 4, 5), NCHW), NZ, ACL["float16"])[0] == 361001       # 4-d fp32 -> NZ: no pair
    assert calc(nd("float16", (2, 3, 4, 5), NCHW), NC1HWC0, -1) == (0, [2, 1, 4, 5, 16], NC1HWC0)
    assert calc(nd("float32", (2, 3, 4, 5), NCHW), FZ, ACL["float16"]) == (0, [20, 1, 16, 16], FZ)
    assert calc(nd("float64", (4, 4)), NZ, -1)[0] == 161002                              # not in the common list
    assert calc(nd("uint32", (4, 4)), NZ, -1)[0] == 161002                               # not in the 950 list
    assert calc(nd("float16", (4, 0)), NZ, -1)[0] == 161002                              # empty
    assert calc(nd("float16", (1, 4)), NZ, -1)[0] == 161002                              # k (dim -2) = 1
    assert calc(nd("float16", (2, 2, 2, 2, 2, 2, 2)), NZ, -1)[0] == 161002               # 7 dims
    assert calc(nd("float32", (4, 4)), NZ, ACL["int32"])[0] == 161002                    # fp32 + int32
    assert calc(nd("int32", (4, 4)), NZ, ACL["float32"])[0] == 161002                    # int32 + fp32
    assert calc(nd("int32", (2, 4, 4, 4), ND), NZ, ACL["float16"])[0] == 161002          # weight quant: 2 or 3 dims
    assert calc(nd("float16", (4, 4)), NC1HWC0, -1)[0] == 361001                          # ND -> NC1HWC0: no pair
    assert calc(nd("float16", (4, 4)), 99, -1)[0] == 361001
    # GetWorkspaceSize
    src = nd("float16", (2, 3, 4, 5), NCHW)
    dst = tensor(np.zeros(0, np.uint16), "float16", (2, 3, 4, 5), NC1HWC0, (2, 1, 4, 5, 16), 640)[0]
    code, msg = status(ops.NpuFormatCast, src, dst)            # TransData checks the NC1HWC0 shape it is given
    assert code == 561103 and "format not match it's shape, format is: NC1HWC0, shape is: [2, 3, 4, 5]" in msg
    code, msg = status(ops.NpuFormatCast, dst, nd("float16", (2, 3, 4, 5), NCHW))
    assert code == 561103 and "TransData not support: NC1HWC0 -> NCHW" in msg
    dst = tensor(np.zeros(0, np.uint16), "float16", (2, 3, 4, 5), NZ, (2, 3, 1, 1, 16, 16), 1536)[0]
    code, msg = status(ops.NpuFormatCast, src, dst)                                      # fp16 NCHW -> NZ
    assert code == 161002 and "must be ND/NCL and the format of dstTensor must be FRACTAL_NZ" in msg
    src = nd("float16", (20, 33))
    code, msg = status(ops.NpuFormatCast, src, nz_of("float16", (20, 33), store=(3, 2, 16, 8)))
    assert code == 161002 and "storage shape [3, 2, 16, 8] is not the FRACTAL_NZ layout" in msg
    code, msg = status(ops.NpuFormatCast, src, nz_of("float16", (20, 33), store=(3, 2, 16)))
    assert code == 161002 and "StorageShape dim of dstTensor must be between 4 and 8" in msg
    # NZ -> ND: C0 of the format, (c1, n1) of the ND shape, the dtype / format pairs
    back = tensor(np.zeros(0, np.uint16), "float16", (20, 33), ND, None, 660)[0]
    assert status(ops.NpuFormatCast, nz_of("float16", (20, 33)), back)[0] == 0
    code, msg = status(ops.NpuFormatCast, nz_of("float16", (20, 33), NZ, (5, 2, 16, 8)), back)
    assert code == 161002 and "incorrect value 8. It should be 16" in msg
    code, msg = status(ops.NpuFormatCast, nz_of("float16", (20, 33), NZ16, (3, 2, 16, 16)), back)
    assert code == 161002 and "Do not support converting [FRACTAL_NZ_C0_16] to ND when srcDtype is [FLOAT16]" in msg
    small = tensor(np.zeros(0, np.uint16), "float16", (20, 17), ND, None, 340)[0]
    code, msg = status(ops.NpuFormatCast, nz_of("float16", (20, 33)), small)
    assert code == 161002 and "n1 must be equal to ceil(n/n0)" in msg
    # NULL tensors: the vendor's CHECK_RET with ACLNN_ERR_INNER_NULLPTR
    assert status(ops.NpuFormatCast, None, back)[0] == 561103
    assert status(ops.NpuFormatCast, src, None)[0] == 561103


def test_every_message_names_the_function_that_failed():
    """The checks shared by both entry points report under the caller's name (the ABI fuzzer's rule: a
    failed call's aclGetRecentErrMsg names it), not under the operator's."""
    from pyaclnn import capi
    capi.aclGetRecentErrMsg()
    assert calc(nd("float64", (4, 4)), NZ, -1)[0] == 161002                              # the shared dtype check
    msg = capi.aclGetRecentErrMsg().decode()
    assert "Parameter srcTensor of aclnnNpuFormatCastCalculateSizeAndFormat has incorrect dtype DOUBLE" in msg
    assert calc(nd("float16", (1, 4)), NZ, -1)[0] == 161002                              # a 950 ND->NZ check
    assert "of aclnnNpuFormatCastCalculateSizeAndFormat" in capi.aclGetRecentErrMsg().decode()
    src = nd("float16", (20, 33))
    code, msg = status(ops.NpuFormatCast, src, nz_of("float16", (20, 33), store=(3, 2, 16)))
    assert code == 161002 and "Parameters srcTensor, dstTensor of aclnnNpuFormatCastGetWorkspaceSize have" in msg
    code, msg = status(ops.NpuFormatCast, nd("float64", (4, 4)), nd("float64", (4, 4)))
    assert code == 161002 and "Parameter srcTensor of aclnnNpuFormatCastGetWorkspaceSize has" in msg


# ---- Atlas A2: every dtype of its list, every layout, in one child ----------------------------------------

A2_LIST = ["int8", "uint8", "float32", "float16", "bfloat16", "int32", "uint32"]
# (public format, shape, private format)
A2_LAYOUTS = [(ND, (2, 19, 35), NZ), (NCHW, (2, 17, 3, 4), NZ), (NCDHW, (2, 3, 17, 2, 3), NZ),
              (NCHW, (2, 17, 3, 4), NC1HWC0), (NHWC, (2, 3, 4, 17), NC1HWC0),
              (NCHW, (18, 17, 2, 3), FZ), (HWCN, (2, 3, 17, 18), FZ),
              (NCDHW, (2, 17, 2, 3, 2), NDC1HWC0), (NDHWC, (2, 2, 3, 2, 17), NDC1HWC0),
              (NCDHW, (18, 17, 2, 2, 3), FZ3D), (DHWCN, (2, 2, 3, 17, 18), FZ3D)]

A2_CHILD = SOURCE + r'''
import json, sys
spec = json.loads(sys.stdin.read())
OUT = {"cases": [], "codes": {}}
for name, fmt, shape, to in spec["cases"]:
    c = codes(name, tuple(shape))
    # the A2 forward pairs take the dtype's C0; NZ from ND also with additionalDtype fp16 (C0 16, TransDataSpecial)
    for add in ([-1, 1] if to == 29 and fmt == 2 and BITS[name] == 32 else [-1]):
        store, actual, stored, back = cast(c, name, tuple(shape), fmt, to, add)
        OUT["cases"].append([name, fmt, to, add, store, actual, c.tobytes().hex(), str(c.dtype),
                             stored.tobytes().hex(), bool(np.array_equal(back, c))])
def nd(name, shape, fmt=2):
    return tensor(codes(name, shape), name, shape, fmt)[0]
OUT["codes"]["double"] = status(ops.NpuFormatCast, nd("float64", (4, 4)), nd("float64", (4, 4), 29))[0]
OUT["codes"]["fp8"] = status(ops.NpuFormatCast, nd("float8_e4m3fn", (4, 4)), nd("float8_e4m3fn", (4, 4), 29))[0]
OUT["codes"]["calc_fp8"] = calc(nd("float8_e4m3fn", (4, 4)), 29, -1)[0]
OUT["codes"]["calc_empty"] = calc(nd("float16", (0, 4)), 29, -1)[0]
OUT["codes"]["calc_nz16_to_nd"] = calc(nd("float16", (3, 2, 16, 16), 50), 2, -1)[0]
OUT["codes"]["calc_2d_to_5hd"] = calc(nd("float16", (4, 4), 0), 3, -1)
OUT["codes"]["nz16_dst"] = status(ops.NpuFormatCast, nd("float32", (4, 4)),
                                  tensor(np.zeros(0, np.uint32), "float32", (4, 4), 50, (1, 1, 16, 16), 256)[0])[0]
keep, kmem = tensor(np.full(16, 7, np.uint16), "float16", (4, 4), 3, (4, 4), 16)
OUT["codes"]["nd_to_5hd"] = [status(ops.NpuFormatCast, nd("float16", (4, 4)), keep)[0], kmem.numpy().tolist()[:4]]
OUT["codes"]["rank"] = status(ops.NpuFormatCast, nd("float16", (4, 4, 4), 0),
                              tensor(np.zeros(0, np.uint16), "float16", (4, 4, 4), 3, (4, 1, 4, 16), 256)[0])
print("RESULT " + json.dumps(OUT))
'''


def test_a2_every_dtype_every_layout():
    cases = [(n, f, s, t) for i, (f, s, t) in enumerate(A2_LAYOUTS) for n in A2_LIST
             if (i + A2_LIST.index(n)) % 2 == 0 or t == NZ]                         # a sample of the product
    assert {n for n, *_ in cases} == set(A2_LIST) and {t for *_, t in cases} == {NZ, NC1HWC0, FZ, NDC1HWC0, FZ3D}
    env = helpers.subprocess_env({"PYACLNN_STUB_SOC": A2})
    proc = subprocess.run([sys.executable, "-c", A2_CHILD], input=json.dumps({"cases": cases}), env=env,
                          capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    for name, fmt, to, add, store, actual, chex, cdt, shex, back_ok in out["cases"]:
        shape = next(s for n, f, s, t in cases if (n, f, t) == (name, fmt, to))
        c = np.frombuffer(bytes.fromhex(chex), cdt).reshape(shape)
        c0 = 32 // (BITS[name] // 8) if add == -1 else 16
        want = nz_ref(c, c0) if to == NZ else blocked_ref(c, fmt, to, c0)
        assert actual == to and list(want.shape) == store, (name, fmt, to, store)
        same(np.frombuffer(bytes.fromhex(shex), cdt).reshape(store), want)
        assert back_ok, (name, fmt, to)
    codes_ = out["codes"]
    assert codes_["double"] == 161002 and codes_["fp8"] == 161002
    assert codes_["calc_fp8"] == 0                               # A2's size calculation takes the common list
    assert codes_["calc_empty"] == 361001                        # A2 sends an empty tensor back to aclop
    assert codes_["calc_nz16_to_nd"] == 161002                   # A2 takes FRACTAL_NZ only
    assert codes_["calc_2d_to_5hd"] == [0, [4, 1, 0, 0, 16], NC1HWC0]   # gert::Shape::GetDim past the rank: 0
    assert codes_["nz16_dst"] == 0                               # no A2 pair (ND, NZ_C0_16): `return false`
    assert codes_["nd_to_5hd"] == [0, [7, 0, 7, 0]]              # no pair: `return false` (success), nothing runs
    assert codes_["rank"][0] == 561103 and "format not match it's shape, format is: NCHW" in codes_["rank"][1]


# ---- torch_npu on the emulator ----------------------------------------------------------------------------

TORCH_BODY = r'''
import torch_npu
torch.manual_seed(0)
def attempt(key, f):
    try:
        OUT[key] = f()
    except Exception as exc:
        OUT[key] = "error: " + str(exc).splitlines()[0][:300]
for dt, shape in (("float16", (33, 24)), ("float32", (3, 20, 33)), ("int8", (40, 70)), ("bfloat16", (17, 5))):
    x = (torch.randn(shape) * 50).to(getattr(torch, dt))
    xn = x.npu()
    z = torch_npu.npu_format_cast(xn, 29)
    key = dt
    OUT[key + ":format"] = torch_npu.get_npu_format(z)
    OUT[key + ":storage_bytes"] = z.untyped_storage().nbytes()
    OUT[key + ":cpu"] = bool(torch.equal(z.cpu(), x))                 # the device-to-host copy casts back to ND
    OUT[key + ":contiguous"] = bool(torch.equal(z.contiguous().cpu(), x))
    nd = torch_npu.npu_format_cast(z, 2)                               # back to ND, then ordinary ops
    OUT[key + ":nd_format"] = torch_npu.get_npu_format(nd)
    if dt != "int8":
        OUT[key + ":ops"] = bool(torch.equal((nd * 2 + nd).cpu(), x * 2 + x))
    y = xn.clone()
    torch_npu.npu_format_cast_(y, 29)
    OUT[key + ":inplace"] = [torch_npu.get_npu_format(y), bool(torch.equal(y.cpu(), x))]
z = torch_npu.npu_format_cast(torch.ones(4, 8).half().npu(), 29)
attempt("add_internal", lambda: (z + z).cpu())
attempt("nchw_5hd", lambda: torch_npu.npu_format_cast(torch.ones(2, 3, 4, 5).npu(), 3))
attempt("nchw_nz_fp32", lambda: torch_npu.npu_format_cast(torch.ones(2, 3, 4, 5).npu(), 29))
OUT["nchw"] = torch_npu.get_npu_format(torch_npu.npu_format_cast(torch.ones(2, 3, 4, 5).npu(), 0))
'''


def test_torch_npu_format_cast():
    out = torch_npu_run(TORCH_BODY, {})
    sizes = {"float16": 2 * 3 * 16 * 16 * 2, "float32": 3 * 3 * 2 * 16 * 16 * 4, "int8": 3 * 3 * 16 * 32,
             "bfloat16": 1 * 2 * 16 * 16 * 2}
    for dt, nbytes in sizes.items():
        # fp32: torch_npu asks for additionalDtype FLOAT16 (C0 16): FRACTAL_NZ_C0_16 (50)
        assert out[dt + ":format"] == (50 if dt == "float32" else 29), dt
        assert out[dt + ":storage_bytes"] == nbytes, dt
        assert out[dt + ":cpu"] and out[dt + ":contiguous"] and out[dt + ":nd_format"] == 2, dt
        assert out.get(dt + ":ops", True) and out[dt + ":inplace"] == [out[dt + ":format"], True], dt
    # what torch_npu itself does on an aclnn-only SoC: ordinary ops refuse internal formats; the vendor's 950
    # TransData has ND <-> NZ only; a 4-d fp32 tensor has no NZ pair (additionalDtype FLOAT16 != FLOAT)
    assert "do not support internal format" in out["add_internal"]
    assert "error code is 561103" in out["nchw_5hd"]
    assert "error code is 361001" in out["nchw_nz_fp32"]
    assert out["nchw"] == 0


# ---- the stream-hazard checker sees a private layout's whole storage --------------------------------------

HAZARD_CHILD = SOURCE + r'''
import ctypes
from pyaclnn import capi
s = pyaclnn.Stream()
src = pyaclnn.from_numpy(np.ones((20, 33), np.float16), stream=s)
store = (3, 2, 16, 16)                                           # 1536 elements; the view reaches 660
mem = pyaclnn.zeros((1536,), np.float16, stream=s)
dst = pyaclnn.Tensor(mem.memory, (20, 33), "float16", format=NZ, storage_dims=store)
ops.NpuFormatCast(src, dst, stream=s)
host = (ctypes.c_char * 64)()
status = capi.aclrtMemcpy(host, 64, mem.data_ptr + 2 * 1500, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST)   # padding, no sync
found = pyaclnn.hazards(clear=True)
print(status, [(h.kind, h.queued_by) for h in found])
s.synchronize()
'''


def test_hazard_checker_covers_the_padding():
    code, out, err = helpers.run_python(HAZARD_CHILD, env_overrides={"PYACLNN_STUB_HAZARDS": "report"})
    assert code == 0, err
    assert out.strip() == "0 [('read-before-sync', ('NpuFormatCast', 'aclnnNpuFormatCast'))]", out + err
