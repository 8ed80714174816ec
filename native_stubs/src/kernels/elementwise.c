#include "kernels/elementwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/parallel.h"
#include "kernels/view.h"

#include "kernels/ew_apply.h"
#include "kernels/ew_fast.h"
#include "numerics.h"

aclDataType ew_result_dtype(ew_opcode op, aclDataType compute) {
    switch (op) {
    case EW_OP_ISFINITE: case EW_OP_EQ: case EW_OP_NE: case EW_OP_GT: case EW_OP_GE: case EW_OP_LT:
    case EW_OP_LE:
        return ACL_BOOL;
    default: return compute;
    }
}

/* fp32 (or all-FLOAT16 / all-BF16) operands and output, compute fp32, + - * / without alpha and with the tensor
 * (or scalar) second: the general loop's arithmetic (load to double, op in double, round to fp32 once, then to
 * the output's dtype) without its per-element dispatch. Which NaN an op on two NaNs returns (and the sign of a
 * negated NaN) depends on how the compiler ordered the general loop's instructions, so a chunk with a NaN
 * result is left to the general loop: the results are the general loop's bit for bit. */
static int f32_arith_case(const ew_plan *p, const ew_loop *L) {
    aclDataType dt = L->ops[0].dtype;
    /* (a 16-bit compute dtype rounds the op's double through fp32 to itself: the same bits as the FLOAT
     * compute's result stored to that dtype) */
    if ((p->compute != ACL_FLOAT && p->compute != dt) || p->alpha_mode != EW_ALPHA_NONE || p->scalar_first ||
        p->bool_inputs || p->raw_copy || p->n_inputs != (p->scalar_second ? 1 : 2))
        return 0;
    if (p->op != EW_OP_ADD && p->op != EW_OP_SUB && p->op != EW_OP_MUL && p->op != EW_OP_DIV) return 0;
    if (dt != ACL_FLOAT && dt != ACL_FLOAT16 && dt != ACL_BF16) return 0;
    for (int k = 1; k < L->n_operands; k++)
        if (L->ops[k].dtype != dt) return 0;
    return 1;
}

/* m elements of a FLOAT16 / BF16 run (exact in fp32) as fp32. (BF16: num_bf16_to_f32's shift, written
 * inline in this hot loop rather than called per element.) */
static void half_run_to_f32(const uint16_t *h, int64_t stride, int64_t m, int bf16, float *f) {
    if (bf16)
        for (int64_t e = 0; e < m; e++) {
            uint32_t u = (uint32_t)h[e * stride] << 16;
            memcpy(&f[e], &u, 4);
        }
    else
        for (int64_t e = 0; e < m; e++) f[e] = num_f16_to_f32(h[e * stride]);
}

/* Up to CHUNK elements into r; 0 if a result is NaN (nothing is written to the output here, so an output
 * that aliases an input is still unread-over when the general loop takes the chunk). */
static int f32_arith_chunk(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t m, float *r) {
    const ew_plan *p = L->plan;
    int inner = L->ndim - 1, scalar = p->scalar_second;
    const ew_operand *a = &L->ops[1], *b = scalar ? NULL : &L->ops[2];
    const float *x = (const float *)(const void *)addr(a, base[1]);
    const float *y = scalar ? NULL : (const float *)(const void *)addr(b, base[2]);
    int64_t sx = a->strides[inner], sy = scalar ? 0 : b->strides[inner];
    float xs[CHUNK], ys[CHUNK];
    if (a->dtype != ACL_FLOAT) {   /* 16-bit operands: widened first (exact), then the fp32 loop below */
        int bf16 = a->dtype == ACL_BF16;
        half_run_to_f32((const uint16_t *)(const void *)addr(a, base[1]), sx, m, bf16, xs);
        x = xs;
        sx = 1;
        if (!scalar) {
            half_run_to_f32((const uint16_t *)(const void *)addr(b, base[2]), sy, m, bf16, ys);
            y = ys;
            sy = 1;
        }
    }
    double s = p->scalar.f;
    int nan = 0;
    switch (p->op) {
    case EW_OP_ADD: for (int64_t e = 0; e < m; e++) r[e] = (float)((double)x[e * sx] + (scalar ? s : (double)y[e * sy])); break;
    case EW_OP_SUB: for (int64_t e = 0; e < m; e++) r[e] = (float)((double)x[e * sx] - (scalar ? s : (double)y[e * sy])); break;
    case EW_OP_MUL: for (int64_t e = 0; e < m; e++) r[e] = (float)((double)x[e * sx] * (scalar ? s : (double)y[e * sy])); break;
    default: for (int64_t e = 0; e < m; e++) r[e] = (float)((double)x[e * sx] / (scalar ? s : (double)y[e * sy])); break;
    }
    for (int64_t e = 0; e < m; e++) nan |= r[e] != r[e];
    return !nan;
}

static void run_general(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n);

static void run_f32_arith(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    int inner = L->ndim - 1;
    const ew_operand *o = &L->ops[0];
    float r[CHUNK];
    for (int64_t start = 0; start < n; start += CHUNK) {
        int64_t m = n - start < CHUNK ? n - start : CHUNK, at[MAX_OPERANDS];
        for (int k = 0; k < L->n_operands; k++) at[k] = base[k] + start * L->ops[k].strides[inner];
        if (!f32_arith_chunk(L, at, m, r)) {
            run_general(L, at, m);
            continue;
        }
        int64_t so = o->strides[inner];
        if (o->dtype == ACL_FLOAT) {
            float *out = (float *)(void *)addr(o, at[0]);
            for (int64_t e = 0; e < m; e++) out[e * so] = r[e];
        } else {   /* the general loop's store: fp32 result rounded to the 16-bit dtype (not NaN here) */
            uint16_t *out = (uint16_t *)(void *)addr(o, at[0]);
            if (o->dtype == ACL_BF16)
                for (int64_t e = 0; e < m; e++) out[e * so] = num_f32_to_bf16(r[e]);
            else
                for (int64_t e = 0; e < m; e++) out[e * so] = num_f32_to_f16(r[e]);
        }
    }
}

/* FILL (ones, zeros, full: e.g. the [2048, 2048] masks torch_npu builds per causal SDPA call): the general
 * loop's one value, cast and stored once, then copied to every element (memset when its bytes are equal). */
static void run_fill(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    const ew_operand *o = &L->ops[0];
    unsigned char v[16];
    size_t isz = o->itemsize;
    ew_store(v, o->dtype, ew_cast(L->plan->scalar, ew_result_dtype(EW_OP_FILL, L->plan->compute), o->dtype));
    unsigned char *d = addr(o, base[0]);
    int64_t stride = o->strides[L->ndim - 1];
    if (stride != 1) {
        for (int64_t e = 0; e < n; e++) memcpy(d + e * stride * (int64_t)isz, v, isz);
        return;
    }
    int one_byte = 1;   /* zeros, bool ones, int8 values: every byte the same */
    for (size_t b = 1; b < isz; b++) one_byte &= v[b] == v[0];
    if (one_byte) {
        memset(d, v[0], (size_t)n * isz);
        return;
    }
    memcpy(d, v, isz);
    for (int64_t done = 1; done < n;) {   /* doubling copies of what is filled already */
        int64_t m = done < n - done ? done : n - done;
        memcpy(d + done * (int64_t)isz, d, (size_t)m * isz);
        done += m;
    }
}

/* COPY between equal dtypes: the bytes, one run at a time where both sides are contiguous (memmove: an
 * in-place copy of a view onto itself). */
static void run_raw_copy(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    const ew_operand *out = &L->ops[0], *in = &L->ops[1];
    int inner = L->ndim - 1;
    size_t isz = out->itemsize;
    if (out->strides[inner] == 1 && in->strides[inner] == 1) {
        memmove(addr(out, base[0]), addr(in, base[1]), (size_t)n * isz);
        return;
    }
    for (int64_t e = 0; e < n; e++)
        memcpy(addr(out, base[0] + e * out->strides[inner]), addr(in, base[1] + e * in->strides[inner]), isz);
}

/* ew_fast.c's chunked loop (the per-element casts' values without a dtype dispatch per element); a chunk with a
 * NaN result is left to run_general, whose choice of NaN (for an op on two NaNs, the compiler's ordering of its
 * instructions) the results keep bit for bit. */
static void run_chunked(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    int inner = L->ndim - 1;
    for (int64_t done = 0; done < n;) {
        int64_t at[MAX_OPERANDS];
        for (int k = 0; k < L->n_operands; k++) at[k] = base[k] + done * L->ops[k].strides[inner];
        done += ew_fast_run(L, at, n - done);
        if (done >= n) break;
        int64_t m = n - done < CHUNK ? n - done : CHUNK;
        for (int k = 0; k < L->n_operands; k++) at[k] = base[k] + done * L->ops[k].strides[inner];
        run_general(L, at, m);
        done += m;
    }
}

/* Processes n consecutive elements along the innermost dimension, starting at element offsets
 * base[k] of each operand. */
static void run_inner(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    if (L->f32_arith) run_f32_arith(L, base, n);
    else if (L->fill) run_fill(L, base, n);
    else if (L->plan->raw_copy) run_raw_copy(L, base, n);
    else if (L->chunked) run_chunked(L, base, n);
    else run_general(L, base, n);
}

/* run_inner for every operator: cast each input to the compute dtype, apply, cast to the output. */
static void run_general(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    const ew_plan *p = L->plan;
    const ew_operand *out = &L->ops[0];
    int inner = L->ndim - 1;
    if (p->raw_copy) {
        const ew_operand *in = &L->ops[1];
        for (int64_t e = 0; e < n; e++)
            memcpy(addr(out, base[0] + e * out->strides[inner]), addr(in, base[1] + e * in->strides[inner]),
                   out->itemsize);
        return;
    }
    ew_value in[MAX_OPERANDS - 1][CHUNK];
    int float_compute = ew_is_float(p->compute);
    aclDataType result = p->op == EW_OP_FN && p->bool_result ? ACL_BOOL : ew_result_dtype(p->op, p->compute);
    for (int k = L->n_operands - 1; k < MAX_OPERANDS - 1; k++)   /* inputs the op does not read */
        memset(in[k], 0, (size_t)(n < CHUNK ? n : CHUNK) * sizeof in[k][0]);
    for (int64_t start = 0; start < n; start += CHUNK) {
        int64_t m = n - start < CHUNK ? n - start : CHUNK;
        for (int k = 1; k < L->n_operands; k++) {
            const ew_operand *o = &L->ops[k];
            ew_value *dst = in[k - 1];
            aclDataType to = (p->bool_inputs >> (k - 1)) & 1u ? ACL_BOOL : p->compute;
            for (int64_t e = 0; e < m; e++)
                dst[e] = ew_cast(ew_load(addr(o, base[k] + (start + e) * o->strides[inner]), o->dtype), o->dtype, to);
        }
        for (int64_t e = 0; e < m; e++) {
            ew_value r = apply(p, float_compute, in[0][e], in[1][e], in[2][e]);
            ew_store(addr(out, base[0] + (start + e) * out->strides[inner]), out->dtype,
                     ew_cast(r, result, out->dtype));
        }
    }
}

/* Linear output elements [begin, end) in row-major order of the iteration shape. */
static void run_range(void *ctx, size_t begin, size_t end) {
    const ew_loop *L = ctx;
    int nd = L->ndim, inner = nd - 1;
    int64_t idx[PYACLNN_STUB_MAX_DIMS];
    int64_t rem = (int64_t)begin;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % L->shape[d];
        rem /= L->shape[d];
    }
    int64_t pos = (int64_t)begin;
    while (pos < (int64_t)end) {
        int64_t base[MAX_OPERANDS];
        for (int k = 0; k < L->n_operands; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) off += idx[d] * L->ops[k].strides[d];
            base[k] = off;
        }
        int64_t n = L->shape[inner] - idx[inner];
        if (n > (int64_t)end - pos) n = (int64_t)end - pos;
        run_inner(L, base, n);
        pos += n;
        idx[inner] += n;
        for (int d = inner; d > 0 && idx[d] >= L->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

/* ---- setup at launch ---------------------------------------------------------------------- */

/* Byte range [lo, hi) a view touches (non-empty views only). */
static void byte_range(const pyaclnn_stub_tensor *t, size_t itemsize, uintptr_t *lo, uintptr_t *hi) {
    int64_t a = t->offset, b = t->offset;
    for (int64_t d = 0; d < t->ndim; d++) {
        int64_t reach = (t->shape[d] - 1) * t->strides[d];
        if (reach < 0) a += reach;
        else b += reach;
    }
    *lo = (uintptr_t)t->data + (uintptr_t)(a * (int64_t)itemsize);
    *hi = (uintptr_t)t->data + (uintptr_t)((b + 1) * (int64_t)itemsize);
}

static int same_view(const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y) {
    if (x->data != y->data || x->offset != y->offset || x->dtype != y->dtype || x->ndim != y->ndim) return 0;
    for (int64_t d = 0; d < x->ndim; d++)
        if (x->shape[d] != y->shape[d] || (x->shape[d] > 1 && x->strides[d] != y->strides[d])) return 0;
    return 1;
}

/* A contiguous copy of view t (same dtype) in a fresh buffer; NULL if out of memory. */
static unsigned char *gather(const pyaclnn_stub_tensor *t, size_t itemsize) {
    int64_t n = pyaclnn_stub_numel(t);
    unsigned char *buf = malloc((size_t)n * itemsize);
    if (buf == NULL) return NULL;
    int64_t idx[PYACLNN_STUB_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t off = t->offset;
        for (int64_t d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        memcpy(buf + i * (int64_t)itemsize, (unsigned char *)t->data + off * (int64_t)itemsize, itemsize);
        for (int64_t d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) break;
            idx[d] = 0;
        }
    }
    return buf;
}

/* Merges adjacent dimensions that every operand walks contiguously and drops size-1 ones. */
static void coalesce(ew_loop *L) {
    int nd = 0;
    for (int d = 0; d < L->ndim; d++) {
        if (L->shape[d] == 1) continue;
        if (nd > 0) {
            int mergeable = 1;
            for (int k = 0; k < L->n_operands; k++)
                if (L->ops[k].strides[nd - 1] != L->ops[k].strides[d] * L->shape[d]) mergeable = 0;
            if (mergeable) {
                L->shape[nd - 1] *= L->shape[d];
                for (int k = 0; k < L->n_operands; k++) L->ops[k].strides[nd - 1] = L->ops[k].strides[d];
                continue;
            }
        }
        L->shape[nd] = L->shape[d];
        for (int k = 0; k < L->n_operands; k++) L->ops[k].strides[nd] = L->ops[k].strides[d];
        nd++;
    }
    if (nd == 0) {   /* a single element */
        L->shape[0] = 1;
        for (int k = 0; k < L->n_operands; k++) L->ops[k].strides[0] = 0;
        nd = 1;
    }
    L->ndim = nd;
}

void ew_kernel(const pyaclnn_stub_launch *launch) {
    const ew_plan *p = launch->params;
    const char *op = launch->op_name;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t total = pyaclnn_stub_numel(out);
    if (total == 0) return;

    ew_loop L;
    memset(&L, 0, sizeof L);
    L.plan = p;
    L.ndim = out->ndim == 0 ? 1 : (int)out->ndim;
    for (int d = 0; d < L.ndim; d++) L.shape[d] = out->ndim == 0 ? 1 : out->shape[d];
    L.n_operands = 1 + p->n_inputs;

    const pyaclnn_stub_tensor *views[MAX_OPERANDS] = {out, NULL, NULL, NULL};
    for (int k = 0; k < p->n_inputs && k < MAX_OPERANDS - 1; k++) views[k + 1] = &launch->inputs[k];
    unsigned char *scratch[MAX_OPERANDS] = {NULL, NULL, NULL, NULL};
    uintptr_t out_lo, out_hi;
    size_t out_isz = ew_itemsize(out->dtype);
    if (!op_view_in_device_memory(out, (int)(8 * out_isz))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: output view (data %p, offset %lld) is not in "
                               "device memory", op, out->data, (long long)out->offset);
        return;
    }
    byte_range(out, out_isz, &out_lo, &out_hi);

    for (int k = 0; k < L.n_operands; k++) {
        const pyaclnn_stub_tensor *t = views[k];
        ew_operand *o = &L.ops[k];
        o->dtype = t->dtype;
        o->itemsize = ew_itemsize(t->dtype);
        o->data = t->data;
        o->offset = t->offset;
        const int64_t *strides = t->strides;
        int64_t contiguous[PYACLNN_STUB_MAX_DIMS];
        if (k > 0) {
            if (!op_view_in_device_memory(t, (int)(8 * o->itemsize))) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: input %d view (data %p, offset %lld) "
                                       "is not in device memory", op, k - 1, t->data, (long long)t->offset);
                goto done;
            }
            uintptr_t lo, hi;
            byte_range(t, o->itemsize, &lo, &hi);
            if (pyaclnn_stub_numel(t) > 0 && lo < out_hi && out_lo < hi && !same_view(t, out)) {
                scratch[k] = gather(t, o->itemsize);   /* read it all before anything is written */
                if (scratch[k] == NULL) {
                    pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", op);
                    goto done;
                }
                o->data = scratch[k];
                o->offset = 0;
                int64_t s = 1;
                for (int64_t d = t->ndim - 1; d >= 0; d--) contiguous[d] = s, s *= t->shape[d];
                strides = contiguous;
            }
        }
        /* Right-align the view's dimensions with the output's; broadcast ones get stride 0. */
        int shift = L.ndim - (int)t->ndim;
        for (int d = 0; d < L.ndim; d++) {
            int sd = d - shift;
            if (sd < 0 || (t->shape[sd] == 1 && L.shape[d] != 1)) o->strides[d] = 0;
            else if (t->shape[sd] == L.shape[d]) o->strides[d] = strides[sd];
            else {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: input %d shape does not broadcast "
                                       "to the output shape (changed after phase 1?)", op, k - 1);
                goto done;
            }
        }
    }
    coalesce(&L);
    L.f32_arith = f32_arith_case(p, &L);
    /* the dtypes ew_store writes as whole bytes (ew_itemsize 0: the 4-bit ones) */
    L.fill = p->op == EW_OP_FILL && L.ops[0].itemsize >= 1 && L.ops[0].itemsize <= 8;
    L.chunked = 1;   /* (the 4-bit dtypes, which no engine operator takes, stay per element) */
    for (int k = 0; k < L.n_operands; k++) L.chunked &= L.ops[k].itemsize >= 1;
    /* an output that addresses some elements twice is written in row-major order by one thread */
    size_t threads = tv_may_self_overlap(out) ? 1 : op_thread_count((size_t)total, MIN_ELEMENTS_PER_THREAD);
    op_parallel_for((size_t)total, threads, run_range, &L);
done:
    for (int k = 0; k < MAX_OPERANDS; k++) free(scratch[k]);
}
