/*
 * Array loops for the conversions. Three things keep them fast without per-element dispatch:
 *  - one loop per round mode, so the mode's round part is a compile-time constant inside the
 *    inlined scalar engine; what the flag bits (NUM_SAT, NUM_NAN_TO_ZERO) decide is worked out
 *    once per call into a small "rules" struct of loop-invariant values;
 *  - fixed-size inner blocks with restrict pointers: no aliasing checks, a vector body and a
 *    short scalar tail;
 *  - the engines are branch-free (num_sel), always inlined, and compiled at -O3 twice, for AVX2
 *    and for baseline x86-64 (num_config.h, NUM_ARRAY_DISPATCH).
 */
#ifndef PYACLNN_NUM_DISPATCH_H
#define PYACLNN_NUM_DISPATCH_H
#include <stddef.h>

#include "num_config.h"
#include "numerics.h"

#define NUM_BLOCK 32

#define NUM_LOOP_ONE_(fn, rules, in, out, n, rnd)                                               \
    case rnd: {                                                                                 \
        size_t i_ = 0;                                                                          \
        for (; i_ + NUM_BLOCK <= (n); i_ += NUM_BLOCK)                                          \
            for (size_t j_ = 0; j_ < NUM_BLOCK; j_++)                                           \
                (out)[i_ + j_] = fn((in)[i_ + j_], rnd, rules);                              \
        for (; i_ < (n); i_++)                                                                  \
            (out)[i_] = fn((in)[i_], rnd, rules);                                            \
        break;                                                                                  \
    }

/* out[i] = fn(in[i], round, &rules) for i < n, with one loop per round mode (the round mode is a
 * constant inside each); `rules` holds what the mode's flags decide (loop-invariant values).
 * `in` and `out` must not overlap (declare them restrict). */
#define NUM_ARRAY_LOOP(fn, rules, in, out, n, mode)                                             \
    do {                                                                                        \
        switch ((mode) & NUM_ROUND_MASK) {                                                      \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_RINT)                                      \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_ROUND)                                     \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_FLOOR)                                     \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_CEIL)                                      \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_TRUNC)                                     \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_ODD)                                       \
            NUM_LOOP_ONE_(fn, rules, in, out, n, NUM_HYBRID)                                    \
        default:                                                                                \
            break;                                                                              \
        }                                                                                       \
    } while (0)

/* The same for 4-bit outputs packed two per byte: pair(in + 2k, round, &rules) makes byte k,
 * single(x, round, &rules) the odd tail (high nibble 0). */
#define NUM_PACKED_ONE_(pair, single, rules, in, packed, n, rnd)                                \
    case rnd: {                                                                                 \
        for (size_t k_ = 0; k_ < (n) / 2; k_++)                                                 \
            (packed)[k_] = pair((in) + 2 * k_, rnd, rules);                                  \
        if ((n) & 1u)                                                                           \
            (packed)[(n) / 2] = single((in)[(n) - 1], rnd, rules);                           \
        break;                                                                                  \
    }

#define NUM_PACKED_LOOP(pair, single, rules, in, packed, n, mode)                               \
    do {                                                                                        \
        switch ((mode) & NUM_ROUND_MASK) {                                                      \
            NUM_PACKED_ONE_(pair, single, rules, in, packed, n, NUM_RINT)                       \
            NUM_PACKED_ONE_(pair, single, rules, in, packed, n, NUM_ROUND)                      \
            NUM_PACKED_ONE_(pair, single, rules, in, packed, n, NUM_FLOOR)                      \
            NUM_PACKED_ONE_(pair, single, rules, in, packed, n, NUM_CEIL)                       \
            NUM_PACKED_ONE_(pair, single, rules, in, packed, n, NUM_TRUNC)                      \
        default:                                                                                \
            break;                                                                              \
        }                                                                                       \
    } while (0)

#endif
