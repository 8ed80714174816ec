/*
 * The signal mask of the emulator's own threads (stream workers, the kernels' worker pool): every
 * asynchronous signal blocked, so that SIGINT, SIGALRM, SIGTERM, SIGCHLD, ... go to the
 * application's threads (Python runs its handlers on the main thread only, and a handler that runs
 * on one of our threads would interrupt a kernel), but the synchronous fault signals left open: the
 * kernel delivers those to the faulting thread, and when they are blocked there it kills the
 * process with no handler run, so a sanitizer (ASan's SEGV report), faulthandler or a crash handler
 * would never see a fault in a task. SIGABRT is open for abort() and a sanitizer's own abort.
 *
 * Use: stub_worker_sigmask(&set); pthread_sigmask(SIG_SETMASK, &set, &old); pthread_create(...);
 * pthread_sigmask(SIG_SETMASK, &old, NULL) -- the new thread inherits the mask.
 */
#ifndef PYACLNN_THREAD_SIGNALS_H
#define PYACLNN_THREAD_SIGNALS_H
#include <signal.h>

static inline void stub_worker_sigmask(sigset_t *set) {
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS};
    sigfillset(set);
    for (unsigned i = 0; i < sizeof faults / sizeof faults[0]; i++) sigdelset(set, faults[i]);
}

#endif
