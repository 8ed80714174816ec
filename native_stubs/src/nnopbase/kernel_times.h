/*
 * PYACLNN_STUB_KERNEL_TIMES=<file>: per operator, how many launches ran, the wall and CPU time their kernels
 * took on the thread that ran them (CPU time leaves out the thread's descheduling on a busy machine, and the
 * kernel pool's helpers), and the elements of their first output, appended to <file> as one JSON line per
 * operator when the process exits. Where a model step's emulator time goes (benchmarks/torch_npu_models.py
 * --kernel-times); unset, a launch pays one atomic load.
 */
#ifndef PYACLNN_NNOPBASE_KERNEL_TIMES_H
#define PYACLNN_NNOPBASE_KERNEL_TIMES_H

#include <stdint.h>

/* Whether the variable is set (read once per process). */
int nn_kernel_times_on(void);
/* Counts one kernel of `op` that took `ns` nanoseconds (`cpu_ns` of its thread's CPU time) and wrote
 * `elements` elements. */
void nn_kernel_times_add(const char *op, int64_t ns, int64_t cpu_ns, int64_t elements);

#endif
