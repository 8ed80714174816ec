/*
 * The FRACTAL_NZ layout of a paged KV cache, shared by its writers (ScatterPaKvCache's and KvRmsNormRopeCache's
 * "PA_NZ"): a cache of numBlocks pages, each [D / L, blockSize, L] with L = 32 bytes / the element size.
 */
#ifndef PYACLNN_KV_NZ_H
#define PYACLNN_KV_NZ_H

#include <stdint.h>

/* Element h of the token at slot s: cache[s / blockSize][h / L][s % blockSize][h % L]. */
static inline void kv_nz_coords(int64_t slot, int64_t h, int64_t block_size, int64_t l, int64_t at[4]) {
    at[0] = slot / block_size, at[1] = h / l, at[2] = slot % block_size, at[3] = h % l;
}

/* The same element's index in a contiguous cache of D elements per token. */
static inline int64_t kv_nz_index(int64_t slot, int64_t h, int64_t block_size, int64_t l, int64_t d) {
    int64_t at[4];
    kv_nz_coords(slot, h, block_size, l, at);
    return ((at[0] * (d / l) + at[1]) * block_size + at[2]) * l + at[3];
}

#endif
