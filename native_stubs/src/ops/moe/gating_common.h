/*
 * What the MoE gating kernels share (gating.c: the top-k softmax ops; gating_top_k.c: MoeGatingTopK and V2):
 * the ranking order of the vendor's sorts and the fp32 softmax steps.
 */
#ifndef PYACLNN_OPS_MOE_GATING_COMMON_H
#define PYACLNN_OPS_MOE_GATING_COMMON_H

#include <math.h>
#include <stdint.h>

#include "kernels/vecmath.h"
#include "opbase/checks.h"

/* A tiling rejection (the tilings run in phase 1: 561002). */
#define mg_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

typedef struct {
    float key;
    int32_t idx;
} mg_item;

/* Descending, NaN first, equal keys in index order (Sort32 / MrgSort / TopK keep the lower index first). */
static inline int mg_cmp(const void *a, const void *b) {
    const mg_item *x = a, *y = b;
    int nx = isnan(x->key), ny = isnan(y->key);
    if (nx != ny) return ny - nx;
    if (!nx && x->key != y->key) return x->key > y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* v[0..n) <- softmax(v) in the kernels' fp32 steps: Exp(v - max) divided by the sum, or (recip) times the fp32
 * reciprocal of the sum (MoeGatingTopK's generalized template: Muls). The row sum is the float64 sum of the fp32
 * terms rounded once (the AscendC ReduceSum order is not modelled). */
static inline void mg_softmax(float *v, int64_t n, int recip) {
    float m = v[0];
    for (int64_t j = 1; j < n; j++)
        if (v[j] > m || isnan(v[j])) m = v[j];
    double s = 0;
    for (int64_t j = 0; j < n; j++) {
        float d = v[j] - m;
        v[j] = vm_exp(d);
        s += v[j];
    }
    float sf = (float)s, r = 1.0f / sf;
    for (int64_t j = 0; j < n; j++) v[j] = recip ? v[j] * r : v[j] / sf;
}

#endif
