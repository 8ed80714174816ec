/*
 * The elementwise engine's loop state and its per-element arithmetic, shared by the engine's two loops
 * (elementwise.c: the per-element loop; ew_fast.c: the chunked one). Only these two files include it.
 */
#ifndef PYACLNN_EW_APPLY_H
#define PYACLNN_EW_APPLY_H

#include <math.h>
#include <string.h>

#include "kernels/elementwise.h"
#ifdef EW_INLINE_CASTS
#include "numerics.h"
#endif

#define MAX_OPERANDS 4             /* out, in0, in1, in2 */
#define CHUNK 256                  /* elements converted per step                          */
#define MIN_ELEMENTS_PER_THREAD (1 << 16)

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
    int chunked;                   /* 1: ew_fast.c's chunked loop (set by ew_kernel)           */
} ew_loop;

/* ---- arithmetic in the compute dtype ------------------------------------------------------ */

static inline ew_value fl(double x, aclDataType compute) {
#ifdef EW_INLINE_CASTS   /* ew_cast's own steps for these dtypes, without its dispatch (ew_fast.c only) */
    if (compute == ACL_FLOAT) return (ew_value){(double)(float)x, 0};
    if (compute == ACL_FLOAT16) return (ew_value){(double)num_f16_to_f32(num_f32_to_f16((float)x)), 0};
    if (compute == ACL_BF16) return (ew_value){(double)num_bf16_to_f32(num_f32_to_bf16((float)x)), 0};
#endif
    return ew_cast((ew_value){x, 0}, ACL_DOUBLE, compute);
}

static inline ew_value wrap(uint64_t x, aclDataType compute) {
#ifdef EW_INLINE_CASTS
    if (compute == ACL_INT64) return (ew_value){0, (int64_t)x};
    if (compute == ACL_INT32) return (ew_value){0, (int64_t)(int32_t)(uint32_t)x};   /* two's complement wrap */
#endif
    return ew_cast((ew_value){0, (int64_t)x}, ACL_INT64, compute);
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

static ew_value apply_float(const ew_plan *p, ew_value a, ew_value b) {
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
    case EW_OP_POW:   /* x ** 2 of a float-representable x (RMSNorm's variance): the square is exact in
                       * double, so it is pow's result too (libm's pow is within 1 ulp of it), at a fraction
                       * of the cost; NaN and values outside fp32 take pow itself */
        return transcendental(b.f == 2.0 && (double)(float)a.f == a.f ? a.f * a.f : pow(a.f, b.f), c);
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

static ew_value apply_int(const ew_plan *p, ew_value a, ew_value b) {
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
static ew_value apply_scalar_ternary(const ew_plan *p, int float_compute, ew_value x0, ew_value x1, ew_value x2) {
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

#endif
