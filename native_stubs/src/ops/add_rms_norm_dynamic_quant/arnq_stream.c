/* Streaming stores of the AddRmsNormDynamicQuant kernel (see arnq_stream.h). */
#include "arnq_opt.h" /* first: compile options */

#include <string.h>

#include "arnq_stream.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <emmintrin.h> /* SSE2: part of every x86-64 CPU */
#define HAVE_STREAM 1
#else
#define HAVE_STREAM 0
#endif

/* A typical last-level cache. Not sysconf(_SC_LEVEL3_CACHE_SIZE): virtual machines report odd
 * values there (320 MiB for a 32 MiB part here), and outputs of 32 MiB or more are unlikely to be
 * read back from cache anyway. */
#define STREAM_MIN_BYTES ((int64_t)32 << 20)

int arnq_stream_available(void) { return HAVE_STREAM; }

int64_t arnq_stream_min_bytes(void) { return STREAM_MIN_BYTES; }

void arnq_stream_copy(void *dst, const void *src, size_t bytes) {
#if HAVE_STREAM
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > bytes) head = bytes;
    memcpy(d, s, head);
    size_t i = head;
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    memcpy(d + i, s + i, bytes - i);
#else
    memcpy(dst, src, bytes);
#endif
}

void arnq_stream_fence(void) {
#if HAVE_STREAM
    _mm_sfence();
#endif
}
