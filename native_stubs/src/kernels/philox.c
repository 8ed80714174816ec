/* Philox4x32-10 and the strided walk shared by the random operators (see rnd_philox.h). */
#include "kernels/philox.h"

#include "kernels/dtype.h"

void rnd_philox(uint64_t seed, uint64_t offset, uint64_t i, uint32_t out[4]) {
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

void rnd_for_each(const pyaclnn_stub_tensor *t, void (*fn)(void *ctx, uint64_t i, unsigned char *p), void *ctx) {
    int64_t n = pyaclnn_stub_numel(t), idx[PYACLNN_STUB_MAX_DIMS] = {0}, off = t->offset;
    size_t isz = ew_itemsize(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        fn(ctx, (uint64_t)i, (unsigned char *)t->data + off * (int64_t)isz);
        for (int64_t d = t->ndim - 1; d >= 0; d--) {
            off += t->strides[d];
            if (++idx[d] < t->shape[d]) break;
            off -= t->strides[d] * idx[d];
            idx[d] = 0;
        }
    }
}
