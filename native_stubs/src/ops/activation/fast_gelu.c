/*
 * FastGelu and FastGeluBackward (fast_gelu.toml): the arch35 kernels' steps (hicann/ops-nn
 * activation/fast_gelu/op_kernel/arch35/fast_gelu_dag.h, fast_gelu_grad/op_kernel/arch35/fast_gelu_grad_dag.h)
 * in fp32, each rounded (src/kernels/vecmath.h: Exp as libm rounded to fp32, Div as IEEE division).
 */
#include "kernels/vecmath.h"
#include "ops_decls.h"

/* d = x * -1.702; d = exp(d); d = d + 1; out = x / d. */
ew_value fast_gelu_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float v = vm_in(x), d = vm_exp(v * -1.702f) + 1.0f;
    return vm_out(p, v / d);
}

/* m = x * -1.702; t = exp(m) + 1; r = 1 / t; u = (r + -1) * m + 1; out = dy * (u * r). */
ew_value fast_gelu_backward_f(const ew_plan *p, ew_value dy, ew_value x, ew_value z) {
    (void)z;
    float m = vm_in(x) * -1.702f, t = vm_exp(m) + 1.0f, r = 1.0f / t;
    float u = (r + -1.0f) * m + 1.0f;
    return vm_out(p, vm_in(dy) * (u * r));
}
