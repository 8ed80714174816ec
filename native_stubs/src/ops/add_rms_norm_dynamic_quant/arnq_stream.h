/*
 * Streaming (non-temporal) stores of the AddRmsNormDynamicQuant kernel, for outputs too big to
 * stay in cache.
 *
 * A plain store first reads the line it writes (write-allocate), so an output written with plain
 * stores costs its bytes twice in memory traffic; a streaming store writes whole lines without
 * reading them, as memcpy does for large copies. Only worth it when nobody reads the output soon
 * from cache, i.e. when the outputs are bigger than the last-level cache.
 */
#ifndef PYACLNN_ARNQ_STREAM_H
#define PYACLNN_ARNQ_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* 1 where arnq_stream_copy uses streaming stores (x86-64); elsewhere it is a memcpy. */
int arnq_stream_available(void);

/* Outputs of at least this many bytes are streamed (automatic mode): about a last-level cache. */
int64_t arnq_stream_min_bytes(void);

/* dst[0..bytes) = src[0..bytes): streaming stores for the 16-byte aligned part of dst. */
void arnq_stream_copy(void *dst, const void *src, size_t bytes);

/* Orders this thread's streaming stores before whatever it does next (a thread's last act before
 * its rows count as done). */
void arnq_stream_fence(void);

#endif
