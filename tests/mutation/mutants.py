"""The mutants of the mutation check (run by tests/mutation/run_mutants.py).

Each mutant is one small, plausible mistake: `original` must occur exactly once in `file`, is
replaced by `replacement`, and at least one of `tests` (test files, or pytest node ids to keep the
run short) must then fail. Add mutants for every new operator family as it lands: its validation
(a status or a check dropped) and its arithmetic (a rounding, a constant, an index).
"""
from __future__ import annotations

from dataclasses import dataclass

OPS = "native_stubs/src/ops"
NUM = "native_stubs/src/numerics"
RT = "native_stubs/src/runtime"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    why: str = ""


ARNQ_NUMERIC = "tests/test_add_rms_norm_dynamic_quant.py"
GMQ_NUMERIC = "tests/test_grouped_dynamic_mx_quant.py"
ENCODE = "tests/test_numerics_encode.py"

MUTANTS = [
    # ---- numerics (native_stubs/src/numerics) -------------------------------------------------
    Mutant("num-round-ties-down", f"{NUM}/num_narrow.h",
           "        return (uint32_t)(rem >= half);", "        return (uint32_t)(rem > half);",
           (f"{ENCODE}::test_float_formats_c_matches_reference",),
           "ROUND (ties away from zero) becomes ties toward zero"),
    Mutant("num-int-saturate-min", f"{NUM}/num_int.c",
           "    uint32_t limit = (1u << (bits - 1)) - 1u + sign;       /* max, or |min| */",
           "    uint32_t limit = (1u << (bits - 1)) - 1u;",
           (f"{ENCODE}::test_integers_c_matches_reference",),
           "saturating integer casts stop at -max instead of min (-127 for int8)"),
    Mutant("num-hif8-ties-truncate", f"{NUM}/num_hif8.c",
           "    uint32_t up = (m >> (drop - 1u)) & 1u; /* ties (and above) away from zero */",
           "    uint32_t up = (m >> (drop - 1u)) & (m >> drop) & 1u;",
           (f"{ENCODE}::test_hifloat8_c_matches_reference",),
           "HiFloat8 ROUND loses half of its round-ups"),
    Mutant("num-e8m0-round-mode", f"{NUM}/num_e8m0.c",
           "        up = e ? m >= 0x00400000u : ax >= 0x00600000u;",
           "        up = e ? m > 0x00400000u : ax >= 0x00600000u;",
           (f"{ENCODE}::test_e8m0_c_matches_reference",),
           "E8M0 ROUND: ties no longer go up"),
    Mutant("num-int4-nibble-order", f"{NUM}/num_pack.c",
           "        packed[k] = (uint8_t)((nibbles[2 * k] & 0xFu) | ((nibbles[2 * k + 1] & 0xFu) << 4));",
           "        packed[k] = (uint8_t)((nibbles[2 * k + 1] & 0xFu) | ((nibbles[2 * k] & 0xFu) << 4));",
           ("tests/test_numerics_lib.py",),
           "int4 packing puts element 2k in the high nibble"),

    # ---- AmpUpdateScale ------------------------------------------------------------------------
    Mutant("amp-growth-interval-off-by-one", f"{OPS}/amp_update_scale/amp_update_scale.c",
           "        if (successful == prm->growth_interval) {", "        if (successful > prm->growth_interval) {",
           ("tests/test_amp_update_scale.py",), "the scale grows one step late"),
    Mutant("amp-growth-ignores-overflow", f"{OPS}/amp_update_scale/amp_update_scale.c",
           "            if (isfinite(grown)) scale = grown;", "            scale = grown;",
           ("tests/test_amp_update_scale.py",), "a grown scale may become inf"),
    Mutant("amp-accepts-double", f"{OPS}/amp_update_scale/amp_update_scale.c",
           "    if (dt != ACL_FLOAT && dt != ACL_FLOAT16 && dt != ACL_BF16) {",
           "    if (dt != ACL_FLOAT && dt != ACL_FLOAT16 && dt != ACL_BF16 && dt != ACL_DOUBLE) {",
           ("tests/test_amp_update_scale.py",), "validation: a consistently DOUBLE call accepted"),

    # ---- AddRmsNormDynamicQuant ----------------------------------------------------------------
    Mutant("arnq-newton-zero-variance", f"{OPS}/add_rms_norm_dynamic_quant/arnq_reduce.c",
           "    if (v == 0.0f) rstd = INFINITY;\n", "",
           (f"{ARNQ_NUMERIC}::test_950_newton_rstd_is_infinite_when_variance_plus_epsilon_is_zero",),
           "issue 16: 950 Newton-Raphson v == 0 special case removed (scale NaN instead of inf)"),
    Mutant("arnq-a2-accepts-zero-epsilon", f"{OPS}/add_rms_norm_dynamic_quant/arnq_check.c",
           "    if (eps <= 0.0f) return fail(", "    if (eps < 0.0f) return fail(",
           ("tests/test_add_rms_norm_dynamic_quant_validation.py",),
           "validation: the 910B tiling accepts epsilon 0"),
    Mutant("arnq-int4-dmax", f"{OPS}/add_rms_norm_dynamic_quant/arnq_row.c",
           "    float qm = p->y_dtype == ACL_INT4 ? 7.0f : 127.0f;",
           "    float qm = p->y_dtype == ACL_INT4 ? 8.0f : 127.0f;",
           (ARNQ_NUMERIC,), "A2 INT4 quantises to [-8, 8] instead of [-7, 7]"),
    Mutant("arnq-fp8-e5m2-dmax", f"{OPS}/add_rms_norm_dynamic_quant/arnq_row.c",
           "    case ACL_FLOAT8_E5M2: return 1.0f / 57344.0f;", "    case ACL_FLOAT8_E5M2: return 1.0f / 49152.0f;",
           (ARNQ_NUMERIC,), "950 E5M2 scale uses a wrong maximum"),

    # ---- GroupedDynamicMxQuant -----------------------------------------------------------------
    Mutant("gmq-subnormal-rule-ge", f"{OPS}/grouped_dynamic_mx_quant/gmq_scale.h",
           "(man > 0x400000u)", "(man >= 0x400000u)",
           (f"{GMQ_NUMERIC}::test_hand_checked_block",),
           "issue 16: scaleAlg 1 subnormal rule bumps man == 0x400000 (E8M0 1 instead of 0)"),
    Mutant("gmq-blocksize-unchecked", f"{OPS}/grouped_dynamic_mx_quant/grouped_dynamic_mx_quant.c",
           "    if (c->blocksize != 32)\n", "    if (c->blocksize != 32 && c->blocksize != 64)\n",
           ("tests/test_grouped_dynamic_mx_quant_validation.py",), "validation: blocksize 64 accepted"),
    Mutant("gmq-fp4-scalealg1-accepted", f"{OPS}/grouped_dynamic_mx_quant/grouped_dynamic_mx_quant.c",
           '    if (fp4 && c->scale_alg == 1) return "scaleAlg 1 is not supported with FP4 y";\n', "",
           ("tests/test_grouped_dynamic_mx_quant_validation.py",), "validation: FP4 with scaleAlg 1 accepted"),

    # ---- the elementwise engine and its operators ----------------------------------------------
    Mutant("ew-broadcast-mismatch-accepted", f"{OPS}/elementwise/ew_check.c",
           "        if (sa != sb && sa != 1 && sb != 1) {", "        if (sa != sb && sa != 1 && sb != 1 && 0) {",
           ("tests/test_elementwise_arith.py",), "validation: shapes that cannot broadcast are accepted"),
    Mutant("ew-promote-u8-i8", f"{OPS}/elementwise/ew_dtype.c",
           "    if ((a == ACL_UINT8 && b == ACL_INT8) || (a == ACL_INT8 && b == ACL_UINT8)) return ACL_INT16;",
           "    if ((a == ACL_UINT8 && b == ACL_INT8) || (a == ACL_INT8 && b == ACL_UINT8)) return ACL_INT8;",
           ("tests/test_elementwise_arith.py",), "type promotion: uint8 + int8 -> int8"),
    Mutant("ew-broadcast-stride", f"{OPS}/elementwise/ew_engine.c",
           "            if (sd < 0 || (t->shape[sd] == 1 && L.shape[d] != 1)) o->strides[d] = 0;",
           "            if (sd < 0) o->strides[d] = 0;",
           ("tests/test_elementwise_arith.py",), "engine: a size-1 input dimension is not broadcast"),
    Mutant("ew-add-axpy-fp32-twice-rounded", f"{OPS}/elementwise/ew_engine.c",
           "            float t = (float)(b.f * p->alpha.f);      /* Muls in fp32 */",
           "            double t = b.f * p->alpha.f;",
           ("tests/test_elementwise_arith.py",), "Add/Sub alpha: the Axpy product is not rounded to fp32"),
    Mutant("ew-sub-sign", f"{OPS}/elementwise/ew_engine.c",
           "        double bb = p->op == EW_OP_SUB && p->alpha_mode == EW_ALPHA_NONE ? -b.f : b.f;",
           "        double bb = b.f;",
           ("tests/test_elementwise_arith.py",), "Sub adds instead of subtracting"),
    Mutant("ew-sub-alpha-not-negated", f"{OPS}/elementwise/ew_binary.c",
           "        plan->alpha.f = negate ? -af : af;", "        plan->alpha.f = af;",
           ("tests/test_elementwise_arith.py",), "Sub with alpha (Axpy) adds"),
    Mutant("ew-mul-bool", f"{OPS}/elementwise/ew_engine.c",
           "    case EW_OP_MUL: return is_bool ? (ew_value){0, (x && y)} : wrap(x * y, c);",
           "    case EW_OP_MUL: return is_bool ? (ew_value){0, (x || y)} : wrap(x * y, c);",
           ("tests/test_elementwise_arith.py",), "Mul of bools is an or"),
    Mutant("ew-divmod-floor", f"{OPS}/elementwise/ew_engine.c",
           "        if (p->op == EW_OP_DIV_FLOOR && a.i % b.i != 0 && ((a.i < 0) != (b.i < 0))) q--;",
           "        if (p->op == EW_OP_DIV_FLOOR && a.i % b.i != 0) q--;",
           ("tests/test_elementwise_arith.py",), "integer floor division rounds positive quotients down"),
    Mutant("ew-div-float-floor", f"{OPS}/elementwise/ew_engine.c",
           "    case EW_OP_DIV_FLOOR: { ew_value q = fl(a.f / b.f, c); q.f = floor(q.f); return q; }",
           "    case EW_OP_DIV_FLOOR: { ew_value q = fl(a.f / b.f, c); q.f = trunc(q.f); return q; }",
           ("tests/test_elementwise_arith.py",), "float DivMod mode 2 truncates"),
    Mutant("add-adds-drops-alpha", f"{OPS}/add/add.c",
           '"aclnnAddsGetWorkspaceSize", "Adds", EW_OP_ADD, self, NULL, other, 1, alpha, out, 0};',
           '"aclnnAddsGetWorkspaceSize", "Adds", EW_OP_ADD, self, NULL, other, 0, alpha, out, 0};',
           ("tests/test_elementwise_arith.py",), "Adds ignores alpha"),
    Mutant("sub-subs-adds", f"{OPS}/sub/sub.c",
           '"aclnnSubsGetWorkspaceSize", "Subs", EW_OP_SUB,', '"aclnnSubsGetWorkspaceSize", "Subs", EW_OP_ADD,',
           ("tests/test_elementwise_arith.py",), "Subs adds"),
    Mutant("mul-muls-adds", f"{OPS}/mul/mul.c",
           '"aclnnMulsGetWorkspaceSize", "Muls", EW_OP_MUL,', '"aclnnMulsGetWorkspaceSize", "Muls", EW_OP_ADD,',
           ("tests/test_elementwise_arith.py",), "Muls adds"),
    Mutant("div-mode-1-floors", f"{OPS}/div/div.c",
           "    case 1: *op = EW_OP_DIV_TRUNC; return ACLNN_SUCCESS;",
           "    case 1: *op = EW_OP_DIV_FLOOR; return ACLNN_SUCCESS;",
           ("tests/test_elementwise_arith.py",), "DivMod mode 1 rounds toward -inf instead of zero"),
    Mutant("cast-out-shape-unchecked", f"{OPS}/cast/cast.c",
           '    if ((rc = ew_check_shape(API, "out", &o, s.shape, s.ndim))) return rc;\n', "",
           ("tests/test_elementwise_copy.py",), "validation: Cast accepts an out of another shape"),
    Mutant("copy-src-not-broadcast-to-self", f"{OPS}/copy/inplace_copy.c",
           '    if ((rc = ew_check_shape(API, "selfRef (src must broadcast to it)", &self, shape, ndim))) return rc;\n',
           "", ("tests/test_elementwise_copy.py::test_copy_validation",),
           "validation: InplaceCopy src larger than selfRef"),
    Mutant("fill-one-writes-zero", f"{OPS}/fill/fill.c",
           '    return constant_fill("aclnnInplaceOneGetWorkspaceSize", "InplaceOne", selfRef, ONE_DTYPES, N(ONE_DTYPES), 1,',
           '    return constant_fill("aclnnInplaceOneGetWorkspaceSize", "InplaceOne", selfRef, ONE_DTYPES, N(ONE_DTYPES), 0,',
           ("tests/test_elementwise_copy.py",), "InplaceOne writes zeros"),

    # ---- runtime: memcpy bounds, stream order, events, memory ----------------------------------
    Mutant("rt-memcpy-destmax-off-by-one", f"{RT}/memcpy.c",
           "    if (count > destMax) return RT_REPORT", "    if (count > destMax + 1) return RT_REPORT",
           ("tests/test_runtime_memcpy.py",), "issue 16: aclrtMemcpy accepts count == destMax + 1"),
    Mutant("rt-sync-does-not-wait", f"{RT}/stream.c",
           "    }\n    if (atomic_load(&s->completed) >= index) return 0;\n",
           "    }\n    return 0;\n",
           ("tests/test_runtime_stream.py",), "stream order: aclrtSynchronizeStream returns before the work is done"),
    Mutant("rt-stream-ignores-event-wait", f"{RT}/event.c",
           "    while (ev->done_id < id && !atomic_load(&s->abort) && !atomic_load(&rt_process_exiting))",
           "    while (0 && ev->done_id < id && !atomic_load(&s->abort) && !atomic_load(&rt_process_exiting))",
           ("tests/test_runtime_event.py",), "events: aclrtStreamWaitEvent does not order the streams"),
    Mutant("rt-elapsed-time-unit", f"{RT}/event.c",
           "    *ms = (float)(((double)end - (double)start) / 1e6);",
           "    *ms = (float)(((double)end - (double)start) / 1e3);",
           ("tests/test_runtime_event.py",), "events: elapsed time in microseconds instead of ms"),
    Mutant("rt-free-unknown-pointer", f"{RT}/memory.c",
           "    if (!rt_mem_table_remove((uintptr_t)devPtr, RT_MEM_DEVICE, &r))\n        return report_bad_free(func, \"devPtr\", devPtr, RT_MEM_DEVICE);\n",
           "    if (!rt_mem_table_remove((uintptr_t)devPtr, RT_MEM_DEVICE, &r))\n        return ACL_SUCCESS;\n",
           ("tests/test_runtime_memory.py",), "aclrtFree silently accepts a pointer it did not hand out"),

    # ---- Python layer: marshalling, strides, codecs --------------------------------------------
    Mutant("py-float-scalar-as-float", "pyaclnn/ops/_marshal.py",
           "    if isinstance(value, float):\n        return Scalar(value, capi.ACL_DOUBLE)",
           "    if isinstance(value, float):\n        return Scalar(value, capi.ACL_FLOAT)",
           ("tests/test_ops.py",), "issue 16: a Python float becomes ACL_FLOAT instead of ACL_DOUBLE"),
    Mutant("py-int-scalar-as-int32", "pyaclnn/ops/_marshal.py",
           "    if isinstance(value, int):\n        return Scalar(value, capi.ACL_INT64)",
           "    if isinstance(value, int):\n        return Scalar(value, capi.ACL_INT32)",
           ("tests/test_ops.py",), "a Python int becomes ACL_INT32 instead of ACL_INT64"),
    Mutant("py-is-contiguous-strict-size1", "pyaclnn/tensor.py",
           "            if d != 1 and s != expected:", "            if s != expected:",
           ("tests/test_tensor.py",), "issue 16: is_contiguous() rejects odd strides of size-1 dimensions"),
    Mutant("py-contiguous-strides-zero-dims", "pyaclnn/tensor.py",
           "        step *= max(dim, 1)\n    return tuple(reversed(strides))",
           "        step *= dim\n    return tuple(reversed(strides))",
           ("tests/test_tensor.py", "tests/test_tensor_api.py"), "strides of zero-size shapes become 0"),
    Mutant("py-slice-offset", "pyaclnn/tensor.py",
           "                if count:\n                    offset += start * stride",
           "                if count:\n                    offset += start",
           ("tests/test_tensor.py",), "a slice of an inner dimension starts at the wrong element"),
    Mutant("py-codec-e8m0-rint-ties", "pyaclnn/codecs.py",
           "        up = np.where(e == 0, ax > 0x600000, (m > half) | ((m == half) & (e & 1 == 1)))",
           "        up = np.where(e == 0, ax > 0x600000, m >= half)",
           (f"{ENCODE}::test_codecs_e8m0_matches_reference_and_c",), "codecs: E8M0 rint ties go up"),
    Mutant("py-packed-nbytes", "pyaclnn/dtypes.py",
           "            return -(-int(n) // self.per_byte)", "            return int(n) // self.per_byte",
           ("tests/test_dtypes.py",), "packed 4-bit sizes round down"),
]
