/*
 * The emulator's operator switches -- the PYACLNN_STUB_* variables that pick an arithmetic alternative or a
 * thread count (PYACLNN_STUB_KERNEL_THREADS, _ARNQ_*, _AMP_FP16_ROUNDING) -- are read from the environment
 * once, at their first use in the process, not at every call: as CANN reads its own variables at start-up,
 * and because each getenv walks the whole environment (the 12 ARNQ switches cost about a microsecond per
 * call). A reader keeps what it parsed with the generation below and parses again only when the
 * generation has moved; pyaclnn_stub_reread_switches() moves it, for programs (the tests) that change the
 * variables between calls.
 */
#include <stdatomic.h>

#include "pyaclnn_stub.h"

static atomic_uint generation = 1;   /* 0 is never current: a reader's "not read yet" */

unsigned pyaclnn_stub_switch_generation(void) {
    return atomic_load_explicit(&generation, memory_order_acquire);
}

void pyaclnn_stub_reread_switches(void) {
    unsigned g = atomic_fetch_add_explicit(&generation, 1, memory_order_acq_rel) + 1;
    if (g == 0) atomic_fetch_add_explicit(&generation, 1, memory_order_acq_rel);   /* skip 0 on wrap */
}
