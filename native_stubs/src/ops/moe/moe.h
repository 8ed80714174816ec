/* Shared by the MoE routing kernels (routing.c, init_routing.c). */
#ifndef PYACLNN_OPS_MOE_H
#define PYACLNN_OPS_MOE_H

#include <stdint.h>

/* An expert id as the routing kernels' fp32 sort key: int32 / int64 -> fp32 with CAST_ROUND (nearest, ties
 * away from zero), exact up to 2^24. */
static inline float moe_expert_key(int64_t e) {
    uint64_t a = e < 0 ? -(uint64_t)e : (uint64_t)e;
    int sh = 0;
    while ((a >> sh) >= (1u << 24)) sh++;
    if (sh) {
        uint64_t q = a >> sh, r = a & ((1ULL << sh) - 1);
        if (r >= (1ULL << (sh - 1))) q++;
        a = q << sh;
    }
    return e < 0 ? -(float)a : (float)a;
}

#endif
