/*
 * Small helpers shared by the operators of libopapi: argument snapshots with the vendor's status
 * codes, dtype names for messages, and checked element access for kernels running on a stream.
 */
#ifndef PYACLNN_OP_COMMON_H
#define PYACLNN_OP_COMMON_H

#include <stdatomic.h>
#include <stddef.h>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "kernels/dtype.h"
#include "pyaclnn_stub.h"

/* For kernels: the address of element `index` (in elements, relative to the view's offset, i.e.
 * index 0 is the view's first element) of an `itemsize`-byte dtype, after checking that the
 * bytes lie in device memory. Otherwise records an asynchronous device fault naming `op` and
 * `param` on the stream (pyaclnn_stub_task_fail) and returns NULL: the kernel must then write
 * nothing. */
void *op_kernel_element(const char *op, const char *param, const pyaclnn_stub_tensor *t, int64_t index,
                        size_t itemsize);

/* For kernels: 1 if every element a strided view touches lies in one live device allocation, its
 * data address is aligned to its element size, and the extent fits in int64 (overflow-checked:
 * shapes, strides and offsets are whatever the caller passed to aclCreateTensor); an empty view
 * passes. `bits` per element: 4 for INT4/FP4 (offsets and strides then count nibbles), 8 * itemsize
 * otherwise. Reports nothing: the caller records the fault. */
int op_view_in_device_memory(const pyaclnn_stub_tensor *t, int bits);

/* PYACLNN_STUB_KERNEL_THREADS: how many host threads an emulated kernel may spread its independent
 * work over (the NPU spreads it over cores). Returns that value (1..256), or 0 when the variable is
 * unset or not a positive integer (the kernel then picks from the CPU count and the work size).
 * Results never depend on it. Read once per process (runtime/switches.c). */
int op_kernel_threads_from_env(void);

/* An integer switch read from the environment once, and again after pyaclnn_stub_reread_switches():
 * op_switch_value(&sw, parse) returns parse()'s value of the current switch generation. Zero-initialised
 * (static) storage is "not read yet". */
typedef struct {
    atomic_uint seen;
    atomic_int value;
} op_switch;
int op_switch_value(op_switch *sw, int (*parse)(void));

#endif
