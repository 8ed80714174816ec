/* This loop rounds to FLOAT, FLOAT16, BF16 and wraps to INT32, INT64 inline (ew_apply.h: the same steps as
 * ew_cast); elementwise.c's per-element loop keeps the calls, so its instructions stay what they were. */
#define EW_INLINE_CASTS 1
#include "kernels/ew_fast.h"

#include "kernels/ew_chunk.h"

int64_t ew_fast_run(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    const ew_plan *p = L->plan;
    const ew_operand *out = &L->ops[0];
    int inner = L->ndim - 1;
    ew_value in[MAX_OPERANDS - 1][CHUNK], res[CHUNK];
    int float_compute = ew_is_float(p->compute);
    aclDataType result = p->op == EW_OP_FN && p->bool_result ? ACL_BOOL : ew_result_dtype(p->op, p->compute);
    int float_result = ew_is_float(result);
    for (int k = L->n_operands - 1; k < MAX_OPERANDS - 1; k++)   /* inputs the op does not read */
        memset(in[k], 0, (size_t)(n < CHUNK ? n : CHUNK) * sizeof in[k][0]);
    for (int64_t start = 0; start < n; start += CHUNK) {
        int64_t m = n - start < CHUNK ? n - start : CHUNK;
        for (int k = 1; k < L->n_operands; k++) {
            const ew_operand *o = &L->ops[k];
            aclDataType to = (p->bool_inputs >> (k - 1)) & 1u ? ACL_BOOL : p->compute;
            ew_load_chunk(addr(o, base[k] + start * o->strides[inner]), o->strides[inner], o->dtype, to, m, in[k - 1]);
        }
        for (int64_t e = 0; e < m; e++) res[e] = apply(p, float_compute, in[0][e], in[1][e], in[2][e]);
        int nan = 0;
        if (float_result)
            for (int64_t e = 0; e < m; e++) nan |= res[e].f != res[e].f;
        if (nan) return start;
        ew_store_chunk(addr(out, base[0] + start * out->strides[inner]), out->strides[inner], out->dtype, result, m,
                       res);
    }
    return n;
}
