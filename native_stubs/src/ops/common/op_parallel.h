/*
 * Spreading a kernel's independent work items over host threads, as the NPU spreads them over its
 * vector cores. PYACLNN_STUB_KERNEL_THREADS (op_kernel_threads_from_env) fixes the count; otherwise
 * it comes from the CPU count and the work size. Threads are created per launch (a launch large
 * enough to use several takes milliseconds, creating a thread tens of microseconds); a persistent
 * pool can replace this without changing callers. Callers must make every item write its own bytes,
 * so results never depend on the thread count.
 */
#ifndef PYACLNN_OP_PARALLEL_H
#define PYACLNN_OP_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* Runs fn(ctx, begin, end) over consecutive ranges covering [0, count). */
typedef void (*op_range_fn)(void *ctx, size_t begin, size_t end);

/* Threads worth using for `count` items when each thread should get at least `min_per_thread`. */
size_t op_thread_count(size_t count, size_t min_per_thread);

/* Splits [0, count) into `threads` ranges and runs them, the first on the calling thread. A thread
 * that cannot be started has its range run on the calling thread. */
void op_parallel_for(size_t count, size_t threads, op_range_fn fn, void *ctx);

#endif
