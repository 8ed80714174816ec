"""Crash and memory bugs of the operators, found by the op-corpus generator used as a fuzzer
(``python tests/tools/op_corpus.py fuzz``), one regression test each.

Every call runs in a child process through the corpus replayer (tests/tools/op_corpus.py: plain ctypes
on libopapi.so, allocations filled and hashed over their whole padded block), so a call that kills
the process is reported as {"crash": signal} instead of killing the test run, and the hashes show
any byte an operator wrote outside its output views. Under the ASan+UBSan build (docs/hardening.md)
the same calls also prove that nothing is read or written out of bounds.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import op_corpus as oc  # noqa: E402

PAT = {"m": "pat", "b": 0xA5}
INVALID = 161002
FLOAT, INT8, INT32, INT64, UINT8 = 0, 2, 3, 9, 4


_PARAMS: dict = {}


def params_of(op: str) -> list:
    """The parameter list the corpus stores for `op` (what its replay builds the ctypes call from)."""
    if not _PARAMS:
        _PARAMS.update({o: e["params"] for o, e in oc.corpus_specs()["ops"].items()})
    return _PARAMS[op]


def run(op: str, calls: list, tmp_path, soc: str = oc.SOCS[0]) -> list:
    """Each call spec (tests/tools/op_corpus.py's format) of `op` replayed in a child: their results."""
    params = params_of(op)
    path = tmp_path / f"{op}-{soc}.json.gz"
    oc.save_json(path, {"format": oc.FORMAT, "ops": {op: {"params": params, "calls": calls}}})
    got = oc.run_calls(soc, [(op, list(range(len(calls))))], str(path), timeout=300)
    return [got[(op, i)] for i in range(len(calls))]


def block(fill: dict, dtype: int, n: int) -> bytearray:
    """The bytes the replayer puts in an allocation of n bytes (its whole padded block)."""
    return bytearray(oc.fill_bytes(fill, dtype, oc.padded_size(n)))


def digest(data) -> str:
    return hashlib.sha256(bytes(data)).hexdigest()[:16]


def ok(res: dict) -> bool:
    return "crash" not in res and oc.succeeded(res)


# ---- 1. aclnnIndexSelect: an empty self or index launches nothing, whatever out's shape -------------

def test_index_select_with_an_empty_self_and_an_out_of_another_shape_does_nothing(tmp_path):
    """Was SIGFPE: the out-shape check is skipped for an empty self (the vendor's HasEmptyTensor), and
    the gather kernel then divided by the plan's zero dimension. The vendor's executor does nothing."""
    self_fill = {"m": "int", "s": 1, "lo": -50, "hi": 50}
    idx_fill = {"m": "int", "s": 2, "lo": 0, "hi": 16}
    calls = [
        # the call the corpus recorded as {"crash": -8}
        {"a": [{"d": INT8, "sh": [16, 1, 0], "n": 1, "fill": self_fill}, -3,
               {"d": INT32, "sh": [3], "n": 12, "fill": idx_fill}, {"d": INT8, "sh": [3, 1, 3], "n": 10, "fill": PAT}]},
        # an empty index with an out larger than self: the gather would have read past self's view
        {"a": [{"d": FLOAT, "sh": [2, 3], "n": 24, "fill": self_fill}, 0,
               {"d": INT64, "sh": [0], "n": 8, "fill": idx_fill}, {"d": FLOAT, "sh": [40, 3], "n": 480, "fill": PAT}]},
    ]
    for soc in oc.SOCS:
        for call, res in zip(calls, run("aclnnIndexSelect", calls, tmp_path, soc)):
            assert ok(res), (soc, res)
            out = call["a"][3]
            assert res["h"][2] == digest(block(PAT, out["d"], out["n"])), (soc, "out was written", res)


def test_gather_kernel_faults_instead_of_walking_a_plan_that_does_not_describe_out(tmp_path):
    """Defence in the shared gather kernel (Index, IndexSelect, Embedding): valid calls are unchanged."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    calls = [{"a": [{"d": FLOAT, "sh": [3, 4], "n": 48, "fill": {"m": "list", "v": x.ravel().tolist()}}, 1,
                    {"d": INT64, "sh": [2], "n": 16, "fill": {"m": "list", "v": [3, 0]}},
                    {"d": FLOAT, "sh": [3, 2], "n": 24, "fill": PAT}]}]
    res = run("aclnnIndexSelect", calls, tmp_path)[0]
    assert ok(res), res
    want = block(PAT, FLOAT, 24)
    want[:24] = x[:, [3, 0]].tobytes()
    assert res["h"][2] == digest(want)


# ---- 2. aclnnNonzeroV2: the coordinates go through out's strides, never outside its view -------------

def nonzero_call(x: np.ndarray, out_shape, strides, offset, n_bytes) -> dict:
    return {"a": [{"d": FLOAT, "sh": list(x.shape), "n": x.nbytes, "fill": {"m": "list", "v": x.ravel().tolist()}},
                  {"d": INT64, "sh": list(out_shape), "st": list(strides), "o": offset,
                   "ss": [n_bytes // 8], "n": n_bytes, "fill": PAT}]}


def expected_out_block(x: np.ndarray, out_shape, strides, offset, n_bytes) -> bytearray:
    """The out allocation after the call: result element j (row-major in [rank, count]) at out's view
    element j (row-major, through its strides); every other byte as filled."""
    coords = np.stack(np.nonzero(x)).astype(np.int64).ravel()
    data = block(PAT, INT64, n_bytes)
    for j, v in enumerate(coords):
        idx = np.unravel_index(j, out_shape)
        off = offset + sum(int(i) * s for i, s in zip(idx, strides))
        data[8 * off:8 * off + 8] = int(v).to_bytes(8, "little", signed=True)
    return data


@pytest.mark.parametrize("soc", oc.SOCS)
def test_nonzero_v2_writes_through_a_negative_stride_out_and_nowhere_else(tmp_path, soc):
    """Was a heap-buffer-overflow: the kernel wrote rank * count coordinates contiguously from out's
    offset whatever its strides; with negative strides the view lies below its offset, so the
    writes left the view (and, at the end of an allocation, the allocation)."""
    x = np.float32([[0, 1, 2], [3, 0, 4]])               # 4 non-zeros: a [2, 4] result
    cases = [
        ([2, 6], [-6, -1], 11, 8 * 40),   # the view is elements 0..11; the old writes went to 11..18
        ([2, 6], [-6, -1], 11, 8 * 12),   # the view ends its allocation: the old writes left the block
        ([12], [-1], 11, 8 * 12),
    ]
    calls = [nonzero_call(x, *c) for c in cases]
    for case, res in zip(cases, run("aclnnNonzeroV2", calls, tmp_path, soc)):
        assert ok(res), (case, res)
        assert res["v"] == {"1": [2, 4]}, res
        assert res["h"][1] == digest(expected_out_block(x, *case)), (case, "bytes outside the result's places changed")


def test_nonzero_v2_with_a_strided_out_leaves_its_gaps_alone(tmp_path):
    """A positive-stride out with gaps (every other element): the coordinates land on the view's
    elements, in row-major order; a contiguous out is unchanged (its first rank * count elements)."""
    x = np.float32([[0, 1, 2], [3, 0, 4]])
    cases = [([2, 12], [24, 2], 0, 8 * 48), ([2, 6], [6, 1], 3, 8 * 16)]
    results = run("aclnnNonzeroV2", [nonzero_call(x, *c) for c in cases], tmp_path)
    for case, res in zip(cases, results):
        assert ok(res), res
        assert res["h"][1] == digest(expected_out_block(x, *case)), case


# ---- 3. aclnnDropoutGenMaskV2: an element count that overflows int64 is refused -----------------------

@pytest.mark.parametrize("shape", [[2 ** 32, 2 ** 32], [-(2 ** 62), 4], [2 ** 63 - 1], [3, 2 ** 62, 1],
                                   [2 ** 63 - 100]])
def test_dropout_gen_mask_refuses_a_shape_whose_element_count_overflows(tmp_path, shape):
    """Was signed overflow (UBSan) in the element count, and a wrapped count of 0 let an empty out
    pass; 2**63 - 100 elements overflow when rounded up to the mask's 128 bits."""
    calls = [{"a": [{"ia": shape}, 0.5, 1, 0, FLOAT, {"d": UINT8, "sh": sh, "n": 16, "fill": PAT}]}
             for sh in ([0], [16])]
    for res in run("aclnnDropoutGenMaskV2", calls, tmp_path):
        assert res.get("s1") == INVALID, res
        assert "overflows int64" in res["m1"], res


def test_dropout_gen_mask_counts_what_fits(tmp_path):
    """Negative dims (the vendor's product, recorded in the corpus), big but representable counts and
    a zero dim after huge ones (0 elements, however the product is ordered) keep their old results."""
    calls = [{"a": [{"ia": sh}, 0.5, 1, 0, FLOAT, {"d": UINT8, "sh": out, "n": 16, "fill": PAT}]}
             for sh, out in (([3, -9], [16]), ([2 ** 40, 2 ** 20], [16]), ([128], [16]), ([2 ** 62, 4, 0], [16]),
                             ([2 ** 62, 4, 0], [0]))]
    res = run("aclnnDropoutGenMaskV2", calls, tmp_path)
    assert res[0]["s1"] == INVALID and "has to be 0, but current is 16" in res[0]["m1"]
    assert res[1]["s1"] == INVALID and f"has to be {2 ** 60 // 8}, but current is 16" in res[1]["m1"]
    assert ok(res[2]), res[2]
    assert res[3]["s1"] == INVALID and "has to be 0, but current is 16" in res[3]["m1"]
    assert ok(res[4]), res[4]


# ---- 4. sizes computed from huge (0-stride) dims: checked, never wrapped -------------------------------

def broadcast_view(dtype: int, shape: list, fill=PAT, n: int = 8) -> dict:
    """A 0-stride view of any size over a small allocation (aclCreateTensor accepts it: its element
    count fits in int64, and every element is the allocation's first)."""
    return {"d": dtype, "sh": shape, "st": [0] * len(shape), "ss": [1], "n": n, "fill": fill}


def test_matmul_whose_operand_copies_no_memory_holds_faults(tmp_path):
    """Was SIGSEGV (UBSan: signed overflow in load_matrix): the fp32 copy of self broadcast to the batch,
    2**40 matrices of 1 x 2**30, had a byte size that wrapped to a tiny block the kernel then filled.
    Now an out-of-host-memory device fault; out untouched."""
    one = {"m": "const", "v": 1.0}
    call = {"a": [broadcast_view(FLOAT, [2 ** 20, 1, 1, 2 ** 30], one), broadcast_view(FLOAT, [1, 2 ** 20, 2 ** 30, 1], one),
                  broadcast_view(FLOAT, [2 ** 20, 2 ** 20, 1, 1]), 0]}
    res = run("aclnnMatmul", [call], tmp_path)[0]
    assert "crash" not in res, res
    assert res["s1"] == 0 and res["sy"] == 207001 and "out of host memory" in res["my"], res
    assert res["h"][2] == digest(block(PAT, FLOAT, 8))


def test_cat_refuses_sizes_that_add_up_past_int64(tmp_path):
    """Was signed overflow (UBSan) in the joined size; the wrapped sum named an out shape of
    [-9223372036854775808]."""
    call = {"a": [{"list": [broadcast_view(INT8, [2 ** 62]), broadcast_view(INT8, [2 ** 62])]}, 0,
                  {"d": INT8, "sh": [0], "n": 1, "fill": PAT}]}
    res = run("aclnnCat", [call], tmp_path)[0]
    assert res.get("s1") == INVALID and "add up to more than INT64_MAX" in res["m1"], res


def test_index_put_refuses_an_indexing_result_of_more_than_int64_max_elements(tmp_path):
    """Was signed overflow (UBSan) in the indexed element count (two broadcast 0-stride index tensors,
    [2**40, 1] and [1, 2**40]); the wrapped count 0 made the call do nothing."""
    zero = {"m": "const", "v": 0}
    call = {"a": [broadcast_view(INT8, [2 ** 31, 2 ** 31]),
                  {"list": [broadcast_view(INT64, [2 ** 40, 1], zero), broadcast_view(INT64, [1, 2 ** 40], zero)]},
                  {"d": INT8, "sh": [1], "n": 1, "fill": PAT}, False, False]}
    res = run("aclnnIndexPutImpl", [call], tmp_path)[0]
    assert res.get("s1") == INVALID and "more than INT64_MAX elements" in res["m1"], res


# ---- 5. empty tensors whose other dims multiply past int64 ----------------------------------------------
# aclCreateTensor bounds the running product of a view's dims from the first one, which a 0 ends: an empty
# [2, 0, 2**62, 2**62] (with explicit strides) is a valid tensor. Steps that multiplied the dims after the 0
# (Cumsum's and Topk's inner size, LayerNorm's normalized size) overflowed (UBSan: these calls die in the
# sanitizer build; the Release build wrapped silently). They are empty calls: nothing to launch, success.

H = 2 ** 62


def empty_view(dtype: int, shape: list) -> dict:
    return {"d": dtype, "sh": shape, "st": [1] * len(shape), "ss": [1], "n": 8, "fill": PAT}


@pytest.mark.parametrize("op, args", [
    ("aclnnCumsum", [empty_view(FLOAT, [2, 0, H, H]), 1, FLOAT, empty_view(FLOAT, [2, 0, H, H])]),
    ("aclnnTopk", [empty_view(FLOAT, [2, 0, H, H]), 0, 1, True, True, empty_view(FLOAT, [2, 0, H, H]),
                   empty_view(INT64, [2, 0, H, H])]),
    ("aclnnLayerNorm", [empty_view(FLOAT, [0, H, H]), {"ia": [H, H]}, None, None, 1e-5, empty_view(FLOAT, [0, H, H]),
                        None, None]),
    ("aclnnLayerNormBackward", [empty_view(FLOAT, [0, H, H]), empty_view(FLOAT, [0, H, H]), {"ia": [H, H]},
                                empty_view(FLOAT, [0, 1, 1]), empty_view(FLOAT, [0, 1, 1]), None, None,
                                {"ba": [True, False, False]}, empty_view(FLOAT, [0, H, H]), None, None]),
    ("aclnnSort", [empty_view(FLOAT, [2, 0, H, H]), True, 1, False, empty_view(FLOAT, [2, 0, H, H]),
                   empty_view(INT64, [2, 0, H, H])]),
])
def test_an_empty_tensor_whose_other_dims_overflow_is_an_empty_call(tmp_path, op, args):
    res = run(op, [{"a": args}], tmp_path)[0]
    assert ok(res), res


def test_a_reduction_of_an_empty_tensor_whose_kept_dims_overflow(tmp_path):
    """LogSumExp over dim 1 of [2, 0, H, H] keeps [2, H, H], whose element count leaves int64: the output shape
    check counted it with a signed overflow (UBSan, found by the op fuzzer). Now the mismatching out is refused."""
    res = run("aclnnLogSumExp", [{"a": [empty_view(FLOAT, [2, 0, H, H]), {"ia": [1]}, False,
                                        empty_view(FLOAT, [0])]}], tmp_path)[0]
    assert "crash" not in res and res.get("s1") == INVALID, res


# ---- 6. aclnnIndexPutImpl: index tensors of up to 25 dims -------------------------------------------------

def test_index_put_refuses_an_indexing_result_of_more_than_25_dims(tmp_path):
    """Was a write past the plan's out_shape[25] over the rest of the parameter block (UBSan: index 25 out
    of bounds; Release: SIGSEGV in the kernel, which read its index tensors through the overwritten
    slots): IndexPutImpl bounds selfRef's rank (8) but not its indices', and a 25-dim index on an 8-dim
    selfRef makes a 32-dim indexing result."""
    idx = {"d": INT64, "sh": [1] * 23 + [1, 2], "n": 16, "fill": {"m": "list", "v": [0, 1]}}
    calls = [{"a": [{"d": FLOAT, "sh": [2] + [1] * 7, "n": 8, "fill": {"m": "const", "v": 1.0}}, {"list": [idx]},
                    {"d": FLOAT, "sh": [1], "n": 4, "fill": {"m": "const", "v": 5.0}}, acc, False]}
             for acc in (False, True)]
    for res in run("aclnnIndexPutImpl", calls, tmp_path):
        assert res.get("s1") == INVALID, res
        assert "would have 32 dimensions" in res["m1"], res
    # 25 dims in all still work: a [1]*23 + [1, 2] index on a 1-D selfRef
    one = [{"a": [{"d": FLOAT, "sh": [2], "n": 8, "fill": {"m": "const", "v": 1.0}}, {"list": [idx]},
                  {"d": FLOAT, "sh": [1], "n": 4, "fill": {"m": "const", "v": 5.0}}, False, False]}]
    res = run("aclnnIndexPutImpl", one, tmp_path)[0]
    assert ok(res), res
    assert res["h"][0] == digest(bytearray(np.float32([5, 5]).tobytes()) + block({"m": "const", "v": 1.0}, FLOAT, 8)[8:])


# ---- the fuzzer itself -------------------------------------------------------------------------------------

def test_the_fuzz_command_runs_a_seed_and_reports_no_crash(capsys, monkeypatch):
    """A slice of `op_corpus.py fuzz` (another seed than the corpus's, adversarial views included): every
    call ends with a status, none kills the process."""
    monkeypatch.setenv("OP_CORPUS_CALL_TIMEOUT", "0")    # the command sets it for its children: restored after
    rc = oc.main(["fuzz", "--seed", "3", "--calls", "40", "--ops", "aclnnIndexSelect,aclnnNonzeroV2,aclnnIndexPutImpl",
                  "--soc", oc.SOCS[0], "--call-timeout", "60"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "crashes=0 slow=0" in out and "'calls': 120" in out, out


def test_the_fuzz_stream_of_seed_0_is_the_corpus_own():
    """The generator's default stream is the one the corpus was recorded from: --seed only adds streams."""
    specs = oc.corpus_specs()["ops"]
    for op in ("aclnnIndexSelect", "aclnnNonzeroV2", "aclnnCat", "aclnnMatmul"):
        e = specs[op]
        stored = e["calls"][e["structural"]:]
        assert oc.generate_random(op, e["params"], len(stored)) == stored, op
        assert oc.generate_random(op, e["params"], 20, salt=1)[:20] != stored[:20], op


# ---- 7. host buffers of 0-stride views with more elements than memory holds ------------------------------
# A 0-stride view of 2**60 or 2**61 elements is valid (its byte size fits in int64, and every element is the
# allocation's first). Kernels copy their operands into host buffers of doubles, floats or ew_values: the
# byte size of that copy (8 or 16 bytes an element) wrapped around size_t to a tiny block, which the kernel
# then filled: SIGSEGV in the host process. Now every such buffer is tv_alloc'ed (overflow-checked): an
# out-of-host-memory device fault, nothing written.

ONE, ZERO = {"m": "const", "v": 1.0}, {"m": "const", "v": 0}
FP16 = 1


@pytest.mark.parametrize("op, args", [
    ("aclnnLayerNorm", [broadcast_view(FP16, [2 ** 61, 1], ONE), {"ia": [1]}, None, None, 1e-5,
                        broadcast_view(FP16, [2 ** 61, 1]), None, None]),
    ("aclnnCumsum", [broadcast_view(FP16, [2 ** 60], ONE), 0, FP16, broadcast_view(FP16, [2 ** 60])]),
    ("aclnnCumsum", [broadcast_view(INT8, [2 ** 60], ZERO), 0, INT8, broadcast_view(INT8, [2 ** 60])]),
    ("aclnnSoftmax", [broadcast_view(FP16, [2 ** 61], ONE), 0, broadcast_view(FP16, [2 ** 61])]),
    ("aclnnEmbeddingDenseBackward", [broadcast_view(FP16, [2 ** 61, 1], ONE), broadcast_view(UINT8, [2 ** 61], ZERO),
                                     1, 99, False, broadcast_view(FP16, [1, 1])]),
    ("aclnnAmax", [broadcast_view(INT8, [2 ** 61, 1], ZERO), {"ia": [1]}, False, broadcast_view(INT8, [2 ** 61])]),
])
def test_a_host_copy_no_size_t_counts_is_an_out_of_memory_fault(tmp_path, op, args):
    res = run(op, [{"a": args}], tmp_path)[0]
    assert "crash" not in res, res
    assert res["s1"] == 0 and res["sy"] == 207001 and "out of host memory" in res["my"], res
    out = args[-1] if op != "aclnnLayerNorm" else args[5]
    assert res["h"][[a for a in args if isinstance(a, dict) and "sh" in a].index(out)] == digest(block(PAT, out["d"], 8))


# ---- 8. repeats: the caller's int64 times a size ---------------------------------------------------------

def test_repeat_interleave_int_repeats_past_int64_is_a_mismatch(tmp_path):
    """RepeatInterleaveInt's check 'outputSize == elements * repeats' multiplied with a signed overflow for
    repeats = INT64_MAX (UBSan, CI's ASan sample of the corpus); now the mismatch is refused."""
    x = {"d": FLOAT, "sh": [6, 3], "n": 72, "fill": PAT}
    for wrap in (2 ** 63 - 1, 2 ** 62 + 1):
        res = run("aclnnRepeatInterleaveInt", [{"a": [x, wrap, 36, {"d": FLOAT, "sh": [36], "n": 144, "fill": PAT}]}],
                  tmp_path)[0]
        assert "crash" not in res and res.get("s1") == INVALID and "is not 18 elements times repeats" in res["m1"], res


def test_repeat_whose_out_size_leaves_int64_is_refused(tmp_path):
    """aclnnRepeat's expected out shape is self's size times each repeat: past int64 it is refused, not wrapped."""
    x = {"d": FLOAT, "sh": [2, 3], "n": 24, "fill": PAT}
    res = run("aclnnRepeat", [{"a": [x, {"ia": [1, 2 ** 62]}, {"d": FLOAT, "sh": [2, 3], "n": 24, "fill": PAT}]}],
              tmp_path)[0]
    assert "crash" not in res and res.get("s1") == INVALID and "leaves int64" in res["m1"], res


def test_index_fill_dim_int64_min_is_refused(tmp_path):
    """aclnnIndexFill's dim check negated dim (UBSan for INT64_MIN, the full corpus under ASan); now 161002."""
    x = {"d": FLOAT, "sh": [2, 1, 4, 2], "n": 64, "fill": PAT}
    call = {"a": [x, -2 ** 63, {"d": INT64, "sh": [3], "n": 24, "fill": {"m": "const", "v": 0}}, {"d": 12, "b": "01"},
                  {"d": FLOAT, "sh": [2, 1, 4, 2], "n": 64, "fill": PAT}]}
    res = run("aclnnIndexFill", [call], tmp_path)[0]
    assert "crash" not in res and res.get("s1") == INVALID and "is greater than self dim" in res["m1"], res


# ---- 9. a caller's attributes at the int64 edges (the fuzzer draws them since it found these) ------------
# Shape arithmetic with groups, pads, strides and dilations overflowed (UBSan) for values near INT64_MAX /
# INT64_MIN; it now saturates (op_mul_sat / op_add_sat, opbase/checks.h), so the vendor's checks refuse them.

X4 = {"d": FLOAT, "sh": [1, 4, 5, 5], "n": 400, "fill": PAT}
W4 = {"d": FLOAT, "sh": [4, 4, 3, 3], "n": 576, "fill": PAT}


@pytest.mark.parametrize("soc", oc.SOCS)
@pytest.mark.parametrize("case", ["groups", "pads", "dilations", "strides"])
def test_convolution_attributes_at_the_int64_edges_are_refused(tmp_path, soc, case):
    big, low = 2 ** 63 - 1, -2 ** 63
    stride, pad, dil, groups = {"ia": [1, 1]}, {"ia": [0, 0]}, {"ia": [1, 1]}, 1
    if case == "groups":
        groups = 2 ** 62                        # bias shape[0] == filter shape[1] * groups (transposed)
    elif case == "pads":
        pad = {"ia": [low, big]}
    elif case == "dilations":
        dil = {"ia": [big, 1]}
    else:
        stride = {"ia": [big, big]}
    bias = {"d": FLOAT, "sh": [8], "n": 32, "fill": PAT}
    out = {"d": FLOAT, "sh": [1, 8, 7, 7], "n": 1568, "fill": PAT}
    res = run("aclnnConvolution", [{"a": [X4, W4, bias, stride, pad, dil, tr, {"ia": [0, 0]}, groups, out, 0]}
                                   for tr in (True, False)], tmp_path, soc)
    for r in res:
        assert "crash" not in r and r.get("s1") == INVALID, r


def test_convolution_3d_backprop_padding_limit_with_an_int64_min_pad(tmp_path):
    """Atlas A2's transposed 3d padding limit '(filter - 1) * dilation - pad <= 255' subtracted INT64_MIN."""
    call = {"a": [{"d": 0, "sh": [1, 4, 1, 2, 1], "n": 40, "fill": PAT}, {"d": 0, "sh": [4, 2, 2, 2, 1], "n": 128, "fill": PAT},
                  {"d": 0, "sh": [4], "n": 16, "fill": PAT}, {"ia": [1, 2, 1]}, {"ia": [-2 ** 63, 0, 0]}, {"ia": [1, 1, 1]},
                  True, {"ia": [0, 1, 0]}, 2, {"d": 0, "sh": [1, 4, 2, 5, 1], "n": 160, "fill": PAT}, 0]}
    res = run("aclnnConvolution", [call], tmp_path, "Ascend910B4")[0]
    assert "crash" not in res and res.get("s1") == INVALID, res


def test_max_pool_backward_dilation_int64_max_is_refused(tmp_path):
    """MaxPool2dWithIndicesBackward's 'pad at most half the effective kernel' computed (k - 1) * dilation + 1."""
    call = {"a": [{"d": 0, "sh": [2, 2, 1, 3], "n": 48, "fill": PAT}, {"d": 0, "sh": [2, 2, 2, 7], "n": 232, "fill": PAT},
                  {"d": 3, "sh": [2, 2, 1, 3], "n": 52, "fill": {"m": "const", "v": 0}}, {"ia": [2, 3]}, {"ia": [1, 2]},
                  {"ia": [0]}, {"ia": [2 ** 63 - 1]}, False, {"d": 0, "sh": [2, 2, 2, 7], "n": 228, "fill": PAT}]}
    res = run("aclnnMaxPool2dWithIndicesBackward", [call], tmp_path)[0]
    assert "crash" not in res and res.get("s1") == INVALID, res


def test_replication_pad_of_int64_max_is_refused(tmp_path):
    """The padded size self + left + right overflowed for a pad of INT64_MAX."""
    x = {"d": FLOAT, "sh": [2, 2, 3], "n": 48, "fill": PAT}
    res = run("aclnnReplicationPad1d", [{"a": [x, {"ia": [1, 2 ** 63 - 1]}, {"d": FLOAT, "sh": [2, 2, 6], "n": 96, "fill": PAT}]}],
              tmp_path)[0]
    assert "crash" not in res and res.get("s1") == INVALID, res


def test_a_whole_line_reduction_of_2_61_broadcast_elements_is_an_out_of_memory_fault(tmp_path):
    """aclnnNorm keeps a reduced line in a host buffer of 16 bytes an element: for 2**61 elements its size
    wrapped to a few bytes, which the kernel then filled (ASan: heap-buffer-overflow)."""
    x = broadcast_view(FP16, [2, 2 ** 60], ONE)
    out = {"d": FP16, "sh": [], "n": 4, "fill": PAT}
    res = run("aclnnNorm", [{"a": [x, {"d": 0, "b": "00000040"}, {"ia": []}, False, out]}], tmp_path)[0]
    assert "crash" not in res and res["s1"] == 0 and res["sy"] == 207001 and "out of host memory" in res["my"], res
