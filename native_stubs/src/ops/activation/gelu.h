/*
 * The GELU arithmetic of gelu.c, shared with the element functions of act_fn.c (aclnnGelu and aclnnGeluBackward
 * run the vendor's GeluV2 tanh kernels: the same values): float64 with libm, before the rounding to fp32.
 */
#ifndef PYACLNN_OPS_ACTIVATION_GELU_H
#define PYACLNN_OPS_ACTIVATION_GELU_H

/* gelu(x): x * Phi(x) (tanh_mode 0) or x/2 * (1 + tanh(k (x + c x^3))) (tanh_mode 1). */
double gelu(double x, int tanh_mode);
/* d gelu(x) / dx for the same two modes. */
double gelu_grad(double x, int tanh_mode);

#endif
