/*
 * Test hooks for the chunk conversions (ew_chunk.h): tests/test_ew_chunk.py runs both ways -- the chunk
 * functions and ew_load + ew_cast / ew_cast + ew_store element by element -- over the same bytes and compares
 * the results bit for bit. Not part of any public header.
 */
#include <string.h>

#include "kernels/ew_chunk.h"
#include "pyaclnn_stub.h"

#define HOOK_CHUNK 256

/* Loads n elements of `from` at src (stride elements apart) as `to`, both ways; returns the index of the first
 * element whose values differ (f compared as bytes), or -1. */
PYACLNN_STUB_API int64_t pyaclnn_stub_ew_chunk_load_check(const void *src, int64_t stride, int from, int to,
                                                           int64_t n) {
    ew_value a[HOOK_CHUNK], b[HOOK_CHUNK];
    size_t isz = ew_itemsize((aclDataType)from);
    for (int64_t start = 0; start < n; start += HOOK_CHUNK) {
        int64_t m = n - start < HOOK_CHUNK ? n - start : HOOK_CHUNK;
        const unsigned char *p = (const unsigned char *)src + start * stride * (int64_t)isz;
        ew_load_chunk(p, stride, (aclDataType)from, (aclDataType)to, m, a);
        for (int64_t e = 0; e < m; e++)
            b[e] = ew_cast(ew_load(p + e * stride * (int64_t)isz, (aclDataType)from), (aclDataType)from, (aclDataType)to);
        for (int64_t e = 0; e < m; e++)
            if (memcmp(&a[e].f, &b[e].f, sizeof a[e].f) != 0 || a[e].i != b[e].i) return start + e;
    }
    return -1;
}

/* Stores n values of `from` (doubles for float dtypes, int64 otherwise) into `to` both ways, into out_chunk and
 * out_ref (n elements each, contiguous); the caller compares them. */
PYACLNN_STUB_API void pyaclnn_stub_ew_chunk_store_both(const double *f, const int64_t *i, int from, int to, int64_t n,
                                                      void *out_chunk, void *out_ref) {
    ew_value v[HOOK_CHUNK];
    size_t isz = ew_itemsize((aclDataType)to);
    for (int64_t start = 0; start < n; start += HOOK_CHUNK) {
        int64_t m = n - start < HOOK_CHUNK ? n - start : HOOK_CHUNK;
        for (int64_t e = 0; e < m; e++) v[e] = (ew_value){f ? f[start + e] : 0.0, i ? i[start + e] : 0};
        ew_store_chunk((unsigned char *)out_chunk + start * (int64_t)isz, 1, (aclDataType)to, (aclDataType)from, m, v);
        for (int64_t e = 0; e < m; e++)
            ew_store((unsigned char *)out_ref + (start + e) * (int64_t)isz, (aclDataType)to,
                     ew_cast(v[e], (aclDataType)from, (aclDataType)to));
    }
}
