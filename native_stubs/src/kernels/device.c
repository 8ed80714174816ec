#include "kernels/device.h"

#include <stdio.h>
#include <stdlib.h>

void *op_kernel_element(const char *op, const char *param, const pyaclnn_stub_tensor *t, int64_t index,
                        size_t itemsize) {
    /* Overflow-checked: the view offset is whatever the caller passed to aclCreateTensor. */
    int64_t elem;
    uintptr_t bytes, addr;
    void *base, *p = NULL;
    size_t size;
    if (t->data != NULL && !__builtin_add_overflow(t->offset, index, &elem) && elem >= 0 &&
        !__builtin_mul_overflow((uintptr_t)elem, (uintptr_t)itemsize, &bytes) &&
        !__builtin_add_overflow((uintptr_t)t->data, bytes, &addr) &&
        pyaclnn_stub_mem_lookup((const void *)addr, itemsize, &base, &size))
        p = (void *)addr;
    if (p == NULL)
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION,
                               "%s: %s element %lld (view offset %lld, %zu-byte elements, data %p) is not in "
                               "device memory (tensor data address unset, freed, or too small)", op, param,
                               (long long)index, (long long)t->offset, itemsize, t->data);
    return p;
}

int op_view_in_device_memory(const pyaclnn_stub_tensor *t, int bits) {
    int64_t lo = t->offset, hi = t->offset, reach;
    for (int64_t k = 0; k < t->ndim; k++) {
        if (t->shape[k] <= 0) return 1;   /* empty: nothing is accessed */
        if (__builtin_mul_overflow(t->shape[k] - 1, t->strides[k], &reach) ||
            __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
            return 0;
    }
    /* Byte range [first, last]; 4-bit elements share bytes (element 2k in the low nibble). */
    int64_t first, last;
    if (t->data == NULL || lo < 0 || __builtin_mul_overflow(lo, bits, &first) ||
        __builtin_mul_overflow(hi, bits, &last) || __builtin_add_overflow(last, bits - 1, &last))
        return 0;
    first /= 8;
    last /= 8;
    size_t align = bits >= 16 ? (size_t)bits / 8 : 1;
    uintptr_t start;
    if ((uintptr_t)t->data % align != 0 || __builtin_add_overflow((uintptr_t)t->data, (uintptr_t)first, &start))
        return 0;
    void *base;
    size_t size;
    return pyaclnn_stub_mem_lookup((const void *)start, (size_t)(last - first + 1), &base, &size);
}

static int parse_kernel_threads(void) {
    const char *env = getenv("PYACLNN_STUB_KERNEL_THREADS");
    if (env == NULL || *env == '\0') return 0;
    char *end;
    long v = strtol(env, &end, 10);
    if (*end != '\0' || v < 1) return 0;
    return v > 256 ? 256 : (int)v;
}

int op_switch_value(op_switch *sw, int (*parse)(void)) {
    unsigned g = pyaclnn_stub_switch_generation();
    if (atomic_load_explicit(&sw->seen, memory_order_acquire) != g) {
        /* racing readers parse the same environment, so either store is right */
        atomic_store_explicit(&sw->value, parse(), memory_order_relaxed);
        atomic_store_explicit(&sw->seen, g, memory_order_release);
    }
    return atomic_load_explicit(&sw->value, memory_order_relaxed);
}

int op_kernel_threads_from_env(void) {
    static op_switch threads;
    return op_switch_value(&threads, parse_kernel_threads);
}
