/* The strided walk shared by the random operators (the generator, rnd_philox, is inline in philox.h). */
#include "kernels/philox.h"

#include "kernels/dtype.h"

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
