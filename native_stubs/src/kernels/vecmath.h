/*
 * The NPU vector unit's fp32 steps, for element functions (ew_fn_type) that follow a vendor kernel step by
 * step (hicann/ops-math, ops-nn op_kernel/arch35: fp16/bf16 inputs are Cast to fp32, every step runs in fp32
 * and the result is Cast back with CAST_RINT).
 *
 * - Add, Sub, Mul, Div, Muls, Adds, Abs, Min, Max, compares and selects are IEEE fp32 with round to nearest
 *   even: C float arithmetic (FLT_EVAL_METHOD 0; the library is built with -ffp-contract=off, so nothing is
 *   fused behind our back).
 * - MulAddDst / MulDstAdd / Axpy-style multiply-accumulate instructions are taken as fused (one rounding),
 *   as the emulator already assumes for the 950's MULA (add_rms_norm_dynamic_quant, Q5): vm_fma.
 * - The transcendental instructions (Exp, Ln, Sqrt's cousins ...) are not published: they are modelled by
 *   libm in double rounded once to fp32 (vm_exp, vm_ln). Results that use them are as good as that model.
 */
#ifndef PYACLNN_VECMATH_H
#define PYACLNN_VECMATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/elementwise.h"

/* The hardware Exp / Ln of an fp32 vector: libm in double, rounded once to fp32. */
static inline float vm_exp(float x) { return (float)exp((double)x); }
static inline float vm_ln(float x) { return (float)log((double)x); }

/* A fused multiply-add in fp32: a * b + c rounded once. */
static inline float vm_fma(float a, float b, float c) { return fmaf(a, b, c); }

/* The fp32 bit pattern and back (sign manipulations: And / Or with 0x80000000). */
static inline uint32_t vm_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float vm_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
/* |r| with x's sign bit or'ed in (Reg::And(sign mask, x) then Reg::Or). */
static inline float vm_or_sign(float r, float x) { return vm_float(vm_bits(r) | (vm_bits(x) & 0x80000000u)); }

/* An element's value in the compute dtype (fp16/bf16/fp32 are exact in float). */
static inline float vm_in(ew_value v) { return (float)v.f; }

/* An fp32 kernel result as a value of the plan's compute dtype (fp16/bf16: the closing Cast, RINT). */
static inline ew_value vm_out(const ew_plan *p, float r) {
    return ew_cast((ew_value){(double)r, 0}, ACL_FLOAT, p->compute);
}

/* A double result (DOUBLE compute dtypes: the vendor's AI CPU kernels compute in double). */
static inline ew_value vm_out_double(double r) { return (ew_value){r, 0}; }

/* The vector unit's Min / Max as the kernels use them: a NaN operand gives NaN. */
static inline float vm_min(float a, float b) { return isnan(a) || isnan(b) ? NAN : (b < a ? b : a); }
static inline float vm_max(float a, float b) { return isnan(a) || isnan(b) ? NAN : (b > a ? b : a); }

/* A unary element function: f32 on the fp32 value (fp16/bf16/fp32 compute dtypes; NULL: f64 rounded once to
 * fp32, the model of an unpublished device function), f64 for DOUBLE (the AI CPU kernels). */
static inline ew_value vm_unary(const ew_plan *p, ew_value x, float (*f32)(float), double (*f64)(double)) {
    if (p->compute == ACL_DOUBLE) return vm_out_double(f64(x.f));
    return vm_out(p, f32 != NULL ? f32(vm_in(x)) : (float)f64((double)vm_in(x)));
}

/* Defines the ew_fn_type `name` as vm_unary(f32, f64). */
#define VM_UNARY_FN(name, f32, f64)                                           \
    ew_value name(const ew_plan *p, ew_value x, ew_value y, ew_value z) {    \
        (void)y, (void)z;                                                     \
        return vm_unary(p, x, f32, f64);                                      \
    }

#endif
