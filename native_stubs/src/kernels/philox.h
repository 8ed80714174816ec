/*
 * The emulator's random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC11; the counter-based generator torch and the NPU's stateless random kernels are built
 * on), keyed by the seed, one counter per element:
 *
 *     key = (seed low 32 bits, seed high 32 bits)
 *     ctr = (i low, i high, offset low, offset high)     i = the element's row-major index
 *
 * so a launch is a pure function of (seed, offset, shape): the same pair gives the same numbers, and
 * the offsets torch_npu's generator hands out (advanced after every call) give disjoint streams.
 * The NPU's own streams cannot be reproduced without its kernel (tests check distributions, class
 * "statistical" of the support table); this one is specified here so that tests/reference/random.py
 * can recompute it bit for bit.
 */
#ifndef PYACLNN_RND_PHILOX_H
#define PYACLNN_RND_PHILOX_H

#include <stdint.h>

#include "pyaclnn_stub.h"

/* The four 32-bit words of Philox4x32-10 for element i (inline: the aclop library, which does not link
 * libopapi, draws the same numbers). */
static inline void rnd_philox(uint64_t seed, uint64_t offset, uint64_t i, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)i, c1 = (uint32_t)(i >> 32), c2 = (uint32_t)offset, c3 = (uint32_t)(offset >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;   /* the Weyl key schedule */
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Uniform in [0, 1) from the top 24 bits of a word (exact in fp32). */
static inline float rnd_u24(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }
/* Uniform in [0, 1) from 53 bits of two words (exact in double). */
static inline double rnd_u53(uint32_t hi, uint32_t lo) {
    return (double)(((uint64_t)hi << 21) ^ (lo >> 11)) * 0x1p-53;
}

/* Calls fn(ctx, i, element address) for every element of the view t in row-major order. */
void rnd_for_each(const pyaclnn_stub_tensor *t, void (*fn)(void *ctx, uint64_t i, unsigned char *p), void *ctx);

#endif
