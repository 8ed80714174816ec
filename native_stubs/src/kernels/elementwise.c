#include "kernels/elementwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/ew_chunk.h"
#include "kernels/parallel.h"
#include "kernels/view.h"

#define MAX_OPERANDS 4             /* out, in0, in1, in2 */
#define CHUNK 256                  /* elements converted per step                          */
#define MIN_ELEMENTS_PER_THREAD (1 << 16)

/* The op functions are inlined into each loop that applies them, as when one loop did: which NaN an op on two
 * NaNs returns depends on how the compiler ordered the instructions there (see run_general). */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* One operand over the (coalesced) iteration shape: strides in elements, 0 where broadcast. */
typedef struct {
    unsigned char *data;           /* storage base                                          */
    int64_t offset;                /* view offset, elements                                 */
    int64_t strides[PYACLNN_STUB_MAX_DIMS];
    aclDataType dtype;
    size_t itemsize;
} ew_operand;

typedef struct {
    const ew_plan *plan;
    int f32_arith;                 /* 1: run_f32_arith's case (set by ew_kernel)              */
    int fill;                      /* 1: run_fill's case                                      */
    int ndim;
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
    int n_operands;                /* operand 0 is the output                                */
    ew_operand ops[MAX_OPERANDS];
} ew_loop;

/* ---- arithmetic in the compute dtype ------------------------------------------------------ */

static inline ew_value fl(double x, aclDataType compute) {
    return ew_cast((ew_value){x, 0}, ACL_DOUBLE, compute);
}

static inline ew_value wrap(uint64_t x, aclDataType compute) {
    return ew_cast((ew_value){0, (int64_t)x}, ACL_INT64, compute);
}

aclDataType ew_result_dtype(ew_opcode op, aclDataType compute) {
    switch (op) {
    case EW_OP_ISFINITE: case EW_OP_EQ: case EW_OP_NE: case EW_OP_GT: case EW_OP_GE: case EW_OP_LT:
    case EW_OP_LE:
        return ACL_BOOL;
    default: return compute;
    }
}

static inline ew_value boolean(int x) { return (ew_value){0, x != 0}; }

/* A transcendental value computed in double, as the NPU's fp32 kernels give it: rounded to fp32
 * first (fp16/bf16 are upcast, computed in fp32 and cast back), DOUBLE kept in double. */
static inline ew_value transcendental(double x, aclDataType compute) {
    return compute == ACL_DOUBLE ? (ew_value){x, 0} : fl((double)(float)x, compute);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static int compare_float(ew_opcode op, double a, double b) {
    switch (op) {
    case EW_OP_EQ: return a == b;
    case EW_OP_NE: return a != b;   /* NaN != anything */
    case EW_OP_GT: return a > b;
    case EW_OP_GE: return a >= b;
    case EW_OP_LT: return a < b;
    default: return a <= b;
    }
}

static int compare_int(ew_opcode op, int64_t a, int64_t b, int is_unsigned) {
    if (is_unsigned) {
        uint64_t x = (uint64_t)a, y = (uint64_t)b;
        return op == EW_OP_EQ ? x == y : op == EW_OP_NE ? x != y : op == EW_OP_GT ? x > y : op == EW_OP_GE ? x >= y
             : op == EW_OP_LT ? x < y : x <= y;
    }
    return op == EW_OP_EQ ? a == b : op == EW_OP_NE ? a != b : op == EW_OP_GT ? a > b : op == EW_OP_GE ? a >= b
         : op == EW_OP_LT ? a < b : a <= b;
}

static ALWAYS_INLINE ew_value apply_float(const ew_plan *p, ew_value a, ew_value b) {
    aclDataType c = p->compute;
    switch (p->op) {
    case EW_OP_ADD:
    case EW_OP_SUB:
    case EW_OP_RSUB: {
        int is_sub = p->op != EW_OP_ADD;
        double bb = is_sub && p->alpha_mode == EW_ALPHA_NONE ? -b.f : b.f;
        if (p->alpha_mode == EW_ALPHA_AXPY_F32) {
            float t = (float)(b.f * p->alpha.f);      /* Muls in fp32 */
            float s = (float)(a.f + (double)t);       /* Add in fp32  */
            return fl(s, c);
        }
        if (p->alpha_mode == EW_ALPHA_MUL_ADD) return fl(a.f + fl(b.f * p->alpha.f, c).f, c);
        return fl(a.f + bb, c);
    }
    case EW_OP_MUL: return fl(a.f * b.f, c);
    case EW_OP_DIV: return fl(a.f / b.f, c);
    case EW_OP_DIV_TRUNC: { ew_value q = fl(a.f / b.f, c); q.f = trunc(q.f); return q; }
    case EW_OP_DIV_FLOOR: { ew_value q = fl(a.f / b.f, c); q.f = floor(q.f); return q; }
    case EW_OP_NEG: return (ew_value){-a.f, 0};
    case EW_OP_ABS: return (ew_value){fabs(a.f), 0};
    case EW_OP_CEIL: return (ew_value){ceil(a.f), 0};
    case EW_OP_SQRT: return fl(sqrt(a.f), c);            /* correctly rounded (double >= 2p + 2 bits) */
    case EW_OP_RECIPROCAL: return fl(1.0 / a.f, c);      /* IEEE division */
    case EW_OP_EXP: return transcendental(exp(a.f), c);
    case EW_OP_RSQRT: return transcendental(1.0 / sqrt(a.f), c);
    case EW_OP_COS: return transcendental(cos(a.f), c);
    case EW_OP_SIN: return transcendental(sin(a.f), c);
    case EW_OP_SIGMOID: return transcendental(sigmoid(a.f), c);
    case EW_OP_SILU: return transcendental(a.f * sigmoid(a.f), c);
    case EW_OP_POW: return transcendental(pow(a.f, b.f), c);
    case EW_OP_SILU_BACKWARD: {
        double s = sigmoid(b.f);
        return transcendental(a.f * s * (1.0 + b.f * (1.0 - s)), c);
    }
    case EW_OP_SIGMOID_BACKWARD: return transcendental(a.f * b.f * (1.0 - b.f), c);
    case EW_OP_ISFINITE: return boolean(isfinite(a.f));
    case EW_OP_EQ: case EW_OP_NE: case EW_OP_GT: case EW_OP_GE: case EW_OP_LT: case EW_OP_LE:
        return boolean(compare_float(p->op, a.f, b.f));
    default: return a;
    }
}

/* Integer power, exact with wrapping; negative exponents give 1 / base truncated (0 unless |base| is 1). */
static ew_value int_pow(int64_t base, int64_t e, aclDataType c) {
    if (e < 0) {
        if (base == 1) return wrap(1, c);
        if (base == -1) return wrap((e & 1) ? (uint64_t)-1 : 1, c);
        return wrap(0, c);
    }
    uint64_t r = 1, x = (uint64_t)base;
    while (e) {
        if (e & 1) r *= x;
        x *= x;
        e >>= 1;
    }
    return wrap(r, c);
}

static ALWAYS_INLINE ew_value apply_int(const ew_plan *p, ew_value a, ew_value b) {
    aclDataType c = p->compute;
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
    int is_bool = c == ACL_BOOL;
    switch (p->op) {
    case EW_OP_ADD:
    case EW_OP_SUB:
    case EW_OP_RSUB:
        if (p->alpha_mode == EW_ALPHA_AXPY_F32) {
            float t = (float)((double)(float)b.i * p->alpha.f);
            float s = (float)((double)(float)a.i + (double)t);
            return ew_cast((ew_value){s, 0}, ACL_FLOAT, c);
        }
        if (p->alpha_mode == EW_ALPHA_MUL_ADD) {
            y = is_bool ? (y && p->alpha.i) : (uint64_t)wrap(y * (uint64_t)p->alpha.i, c).i;
        } else if (p->op != EW_OP_ADD) {
            y = (uint64_t)0 - y;
        }
        return is_bool ? (ew_value){0, (x || y)} : wrap(x + y, c);
    case EW_OP_MUL: return is_bool ? (ew_value){0, (x && y)} : wrap(x * y, c);
    case EW_OP_DIV_TRUNC:
    case EW_OP_DIV_FLOOR: {
        if (b.i == 0) return (ew_value){0, 0};              /* the emulator's choice; see ew_engine.h */
        if (b.i == -1) return wrap((uint64_t)0 - x, c);     /* INT64_MIN / -1 wraps */
        int64_t q = a.i / b.i;
        if (p->op == EW_OP_DIV_FLOOR && a.i % b.i != 0 && ((a.i < 0) != (b.i < 0))) q--;
        return wrap((uint64_t)q, c);
    }
    case EW_OP_NEG: return wrap((uint64_t)0 - x, c);
    case EW_OP_ABS: return is_bool ? a : wrap(a.i < 0 ? (uint64_t)0 - x : x, c);
    case EW_OP_CEIL: return a;
    case EW_OP_POW: return is_bool ? (ew_value){0, x || !y} : int_pow(a.i, b.i, c);
    case EW_OP_ISFINITE: return boolean(1);
    case EW_OP_EQ: case EW_OP_NE: case EW_OP_GT: case EW_OP_GE: case EW_OP_LT: case EW_OP_LE:
        return boolean(compare_int(p->op, a.i, b.i, c == ACL_UINT64 || c == ACL_UINT32 || c == ACL_UINT16));
    case EW_OP_BITAND: return is_bool ? boolean(x && y) : wrap(x & y, c);
    default: return a;
    }
}

/* Lerp / Addcmul / Addcdiv: x0, x1, x2 and the scalar already in the compute dtype. */
static ALWAYS_INLINE ew_value apply_scalar_ternary(const ew_plan *p, int float_compute, ew_value x0, ew_value x1, ew_value x2) {
    aclDataType c = p->compute;
    if (float_compute) {
        double s = p->scalar.f, r;
        if (c == ACL_DOUBLE) {
            r = p->op == EW_OP_LERP      ? x0.f + s * (x1.f - x0.f)
                : p->op == EW_OP_ADDCMUL ? x0.f + s * (x1.f * x2.f)
                                         : x0.f + s * (x1.f / x2.f);
            return (ew_value){r, 0};
        }
        float a = (float)x0.f, b = (float)x1.f, t;
        if (p->op == EW_OP_LERP) t = (float)s * (b - a);
        else if (p->op == EW_OP_ADDCMUL) t = (float)s * (b * (float)x2.f);
        else t = (float)s * (b / (float)x2.f);
        return fl((double)(a + t), c);
    }
    uint64_t a = (uint64_t)x0.i, b = (uint64_t)x1.i, d = (uint64_t)x2.i, v = (uint64_t)p->scalar.i;
    if (p->op == EW_OP_ADDCMUL) return wrap(a + v * (b * d), c);
    if (p->op == EW_OP_ADDCDIV) {   /* truncating division; x / 0 = 0 (the emulator's choice, as DIV_TRUNC) */
        int64_t q = x2.i == 0 ? 0 : x2.i == -1 ? (int64_t)(0 - b) : x1.i / x2.i;
        return wrap(a + v * (uint64_t)q, c);
    }
    return x0;   /* LERP takes floats only */
}

/* One element: inputs x[0..2] already in their load dtypes. */
static inline ew_value apply(const ew_plan *p, int float_compute, ew_value x0, ew_value x1, ew_value x2) {
    if (p->op == EW_OP_FN) {
        if (p->scalar_second) x1 = p->scalar;
        if (p->scalar_first) {
            x1 = x0;
            x0 = p->scalar;
        }
        return p->fn(p, x0, x1, x2);
    }
    switch (p->op) {
    case EW_OP_FILL: return p->scalar;
    case EW_OP_COPY: return x0;
    case EW_OP_WHERE: return x0.i ? x1 : x2;
    case EW_OP_MASKED_FILL: return x1.i ? p->scalar : x0;
    case EW_OP_LERP: case EW_OP_ADDCMUL: case EW_OP_ADDCDIV:
        return apply_scalar_ternary(p, float_compute, x0, x1, x2);
    default: break;
    }
    ew_value y = p->scalar_second ? p->scalar : x1;
    if (p->scalar_first) {
        y = x0;
        x0 = p->scalar;
    }
    if (p->op == EW_OP_RSUB) {   /* other - alpha * self: SUB with the operands swapped */
        ew_value t = x0;
        x0 = y;
        y = t;
    }
    return float_compute ? apply_float(p, x0, y) : apply_int(p, x0, y);
}

/* ---- strided iteration -------------------------------------------------------------------- */

static inline unsigned char *addr(const ew_operand *o, int64_t elem) {
    return o->data + (o->offset + elem) * (int64_t)o->itemsize;
}

/* fp32 operands and output, compute fp32, + - * / without alpha and with the tensor (or scalar) second:
 * the general loop's arithmetic (load to double, op in double, round to fp32 once) without its per-element
 * dispatch. Which NaN an op on two NaNs returns (and the sign of a negated NaN) depends on how the compiler
 * ordered the general loop's instructions, so a chunk with a NaN result is left to the general loop: the
 * results are the general loop's bit for bit. */
static int f32_arith_case(const ew_plan *p, const ew_loop *L) {
    if (p->compute != ACL_FLOAT || p->alpha_mode != EW_ALPHA_NONE || p->scalar_first || p->bool_inputs ||
        p->raw_copy || p->n_inputs != (p->scalar_second ? 1 : 2))
        return 0;
    if (p->op != EW_OP_ADD && p->op != EW_OP_SUB && p->op != EW_OP_MUL && p->op != EW_OP_DIV) return 0;
    for (int k = 0; k < L->n_operands; k++)
        if (L->ops[k].dtype != ACL_FLOAT) return 0;
    return 1;
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

static void run_general_ref(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n);
static void run_general(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n);

static void run_f32_arith(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    int inner = L->ndim - 1;
    const ew_operand *o = &L->ops[0];
    float r[CHUNK];
    for (int64_t start = 0; start < n; start += CHUNK) {
        int64_t m = n - start < CHUNK ? n - start : CHUNK, at[MAX_OPERANDS];
        for (int k = 0; k < L->n_operands; k++) at[k] = base[k] + start * L->ops[k].strides[inner];
        if (!f32_arith_chunk(L, at, m, r)) {
            run_general_ref(L, at, m);
            continue;
        }
        float *out = (float *)(void *)addr(o, at[0]);
        for (int64_t e = 0; e < m; e++) out[e * o->strides[inner]] = r[e];
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

/* Processes n consecutive elements along the innermost dimension, starting at element offsets
 * base[k] of each operand. */
static void run_inner(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    if (L->f32_arith) run_f32_arith(L, base, n);
    else if (L->fill) run_fill(L, base, n);
    else run_general(L, base, n);
}

/* The per-element loop: each input element loaded and cast to the compute dtype, applied, cast to the output
 * and stored, one call each. run_general takes its chunks that give a NaN (see there). */
static void run_general_ref(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    const ew_plan *p = L->plan;
    const ew_operand *out = &L->ops[0];
    int inner = L->ndim - 1;
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

/* run_inner for every operator: cast each input to the compute dtype, apply, cast to the output, a chunk at a
 * time (ew_chunk.h: the per-element casts' values, without a dtype dispatch per element). Which NaN an op on
 * two NaNs returns depends on how the compiler ordered the loop's instructions, so a chunk with a NaN result
 * is left to run_general_ref (nothing of it is stored before: an output that aliases an input is unchanged). */
static void run_general(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n) {
    const ew_plan *p = L->plan;
    const ew_operand *out = &L->ops[0];
    int inner = L->ndim - 1;
    if (p->raw_copy) {
        run_raw_copy(L, base, n);
        return;
    }
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
        int nan = 0;
        for (int64_t e = 0; e < m; e++) res[e] = apply(p, float_compute, in[0][e], in[1][e], in[2][e]);
        if (float_result)
            for (int64_t e = 0; e < m; e++) nan |= res[e].f != res[e].f;
        if (nan) {
            int64_t at[MAX_OPERANDS];
            for (int k = 0; k < L->n_operands; k++) at[k] = base[k] + start * L->ops[k].strides[inner];
            run_general_ref(L, at, m);
            continue;
        }
        ew_store_chunk(addr(out, base[0] + start * out->strides[inner]), out->strides[inner], out->dtype, result, m,
                       res);
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
    /* an output that addresses some elements twice is written in row-major order by one thread */
    size_t threads = tv_may_self_overlap(out) ? 1 : op_thread_count((size_t)total, MIN_ELEMENTS_PER_THREAD);
    op_parallel_for((size_t)total, threads, run_range, &L);
done:
    for (int k = 0; k < MAX_OPERANDS; k++) free(scratch[k]);
}
