/*
 * Element functions and steps of suite_math.toml: Sinc (hicann/ops-math math/sinc/op_kernel/arch35/sinc_dag.h:
 * fp32, x == 0 gives 1, else sin(pi x) / (pi x)), Gcd (math/gcd/op_kernel/arch35/gcd_dag.h: the gcd of the
 * magnitudes as unsigned 64-bit numbers; the kernel's binary algorithm, Euclid's here: one result), Gcd's dtype
 * checks (aclnn_gcd.cpp) and Lerp with a weight tensor (math/lerp/op_kernel/arch35: fp32, the two fused forms
 * either side of weight 0.5).
 */
#include "kernels/vecmath.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static float sinc32(float x) {
    if (x == 0.0f) return 1.0f;
    float t = 3.14159265358979323846f * x;
    return (float)sin((double)t) / t;
}

static double sinc64(double x) {
    if (x == 0.0) return 1.0;
    double t = 3.14159265358979323846 * x;
    return sin(t) / t;
}

VM_UNARY_FN(sinc_f, sinc32, sinc64)

ew_value gcd_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)p, (void)z;
    uint64_t x = a.i < 0 ? 0 - (uint64_t)a.i : (uint64_t)a.i, y = b.i < 0 ? 0 - (uint64_t)b.i : (uint64_t)b.i;
    while (y != 0) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    return (ew_value){0, (int64_t)x};
}

/* gcd_dtypes self other out LIST: aclnn_gcd.cpp's CheckDtypeValid -- not both BOOL, out integral, self and other
 * promote, the promoted dtype in LIST and castable to out; the compute dtype is the promoted one. */
aclnnStatus opc_gcd_dtypes(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype, out = op_tensor(c, s, 2)->dtype;
    char b1[24], b2[24], b3[24], all[256];
    if (a == ACL_BOOL && b == ACL_BOOL) return op_invalidf(c->api, "gcd not implemented for %s", op_dtype_name(a, b1));
    if (!ew_is_integral(out, 1))
        return op_invalidf(c->api, "Out type should be integral but got %s.", op_dtype_name(out, b1));
    aclDataType p = ew_promote(a, b);
    if (p == ACL_DT_UNDEFINED)
        return op_invalidf(c->api, "Self dtype %s and other dtype %s can not be promoted.", op_dtype_name(a, b1),
                           op_dtype_name(b, b2));
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (!ew_in_list(p, list, n))
        return op_invalidf(c->api, "Self dtype %s and other dtype %s get promoteType dtype %s should be in dtype "
                           "support list [%s].", op_dtype_name(a, b1), op_dtype_name(b, b2), op_dtype_name(p, b3),
                           ew_dtype_list(list, n, all, sizeof all));
    if (!ew_can_cast(p, out))
        return op_invalidf(c->api, "Result type %s can't be cast to the desired output type %s.", op_dtype_name(p, b1),
                           op_dtype_name(out, b2));
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* d = end - self; weight < 0.5 ? fma(weight, d, self) : fma(weight - 1, d, end) (DOUBLE: the same in double). */
ew_value lerp_tensor_f(const ew_plan *p, ew_value start, ew_value end, ew_value weight) {
    if (p->compute == ACL_DOUBLE) {
        double d = end.f - start.f;
        return vm_out_double(weight.f < 0.5 ? fma(weight.f, d, start.f) : fma(weight.f - 1.0, d, end.f));
    }
    float s = vm_in(start), e = vm_in(end), w = vm_in(weight), d = e - s;
    return vm_out(p, w < 0.5f ? vm_fma(w, d, s) : vm_fma(w - 1.0f, d, e));
}
