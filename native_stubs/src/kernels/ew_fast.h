/*
 * The elementwise engine's chunked loop: CHUNK elements at a time, each input's run converted in one call
 * (ew_chunk.h), the op applied to the chunk, the results converted and stored in one call -- the values the
 * per-element loop (elementwise.c's run_general) gives, without a dtype dispatch per element.
 */
#ifndef PYACLNN_EW_FAST_H
#define PYACLNN_EW_FAST_H

#include "kernels/ew_apply.h"

/* Runs n consecutive elements along the innermost dimension from element offsets base[k], a chunk at a time;
 * stops before the first chunk with a NaN result, storing nothing of it (which NaN an op on two NaNs returns is
 * the per-element loop's choice: its caller runs that chunk there), and returns the elements stored. */
int64_t ew_fast_run(const ew_loop *L, const int64_t base[MAX_OPERANDS], int64_t n);

#endif
