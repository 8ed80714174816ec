/*
 * Spreading a kernel's independent work items over host threads, as the NPU spreads them over its
 * vector cores: one persistent worker pool shared by every kernel of libopapi (op_parallel.c).
 *
 * The work is always cut the same way - `parts` consecutive ranges [count*i/parts, count*(i+1)/parts)
 * - whichever threads end up running them; callers make every item write its own bytes, so results
 * never depend on the thread count. The calling thread runs parts too, so a job always finishes even
 * when no worker could be started. One job uses the pool at a time: a job submitted while another
 * runs (a second stream, or a kernel nested in a worker) runs its parts on its calling thread.
 *
 * Fork: pool threads do not survive fork(); the child's pool starts empty and grows again on its
 * first parallel job. Exit: the workers are detached and parked; they never keep the process alive.
 */
#ifndef PYACLNN_OP_PARALLEL_H
#define PYACLNN_OP_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* Runs fn(ctx, begin, end) over consecutive ranges covering [0, count). */
typedef void (*op_range_fn)(void *ctx, size_t begin, size_t end);

/* The same with the part's index (0 .. parts-1), for callers that give each part its own buffers. */
typedef void (*op_part_fn)(void *ctx, size_t part, size_t begin, size_t end);

/* Threads worth using for `work` units when each thread should get at least `min_per_thread` of them:
 * PYACLNN_STUB_KERNEL_THREADS when set (used as given), else the online CPUs (counted once, at most
 * 16) but no more than work / min_per_thread; at least 1. */
size_t op_thread_count(size_t work, size_t min_per_thread);

/* Splits [0, count) into min(threads, count) parts and runs them on the calling thread and the pool;
 * returns when every part is done. */
void op_parallel_for(size_t count, size_t threads, op_range_fn fn, void *ctx);

/* Splits [0, count) into min(parts, count) parts (at most OP_MAX_PARTS) and runs fn on each; returns
 * when every part is done. */
#define OP_MAX_PARTS 256
void op_parallel_parts(size_t count, size_t parts, op_part_fn fn, void *ctx);

/* Workers the pool has started in this process (0 in a fresh forked child); for tests and reports. */
size_t op_pool_workers(void);

#endif
