/*
 * Runs of elements converted in one call: what ew_load + ew_cast (loading) and ew_cast + ew_store (storing)
 * give element by element, with direct loops for the common dtype pairs (FLOAT, FLOAT16, BF16, INT32, INT64,
 * BOOL to themselves, FLOAT16/BF16 to FLOAT, FLOAT/FLOAT16/BF16 to FLOAT16/BF16) instead of a dtype dispatch
 * per element; every other pair, and any element whose value is a NaN of a 16-bit float (whose payload the
 * NPU's Cast may change), goes through the per-element functions. So the values are theirs bit for bit
 * (tests/test_ew_chunk.py compares both ways over every dtype pair).
 */
#ifndef PYACLNN_EW_CHUNK_H
#define PYACLNN_EW_CHUNK_H

#include <stdint.h>

#include "kernels/dtype.h"

/* dst[e] = ew_cast(ew_load(src + e * stride * itemsize(from)), from, to) for e in [0, m). */
void ew_load_chunk(const unsigned char *src, int64_t stride, aclDataType from, aclDataType to, int64_t m,
                   ew_value *dst);

/* ew_store(dst + e * stride * itemsize(to), to, ew_cast(v[e], from, to)) for e in [0, m). */
void ew_store_chunk(unsigned char *dst, int64_t stride, aclDataType to, aclDataType from, int64_t m,
                    const ew_value *v);

#endif
