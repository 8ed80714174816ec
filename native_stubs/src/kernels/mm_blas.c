/*
 * The matmul engine's BLAS: OpenBLAS from the scipy-openblas32 wheel (symbols prefixed scipy_), copied next to
 * libopapi by the build (native_stubs/CMakeLists.txt) and loaded from there at the first fp32 product that
 * uses it -- not linked as a NEEDED library: OpenBLAS starts its own thread pool in its constructor (its
 * shutdown function is not exported), and a process that never multiplies a matrix (most C samples, the
 * stream and signal tests) should not get a 25 MB mapping and a thread it never uses. It is loaded with
 * every asynchronous signal blocked (common/thread_signals.h), so that idle OpenBLAS thread, like ours,
 * leaves SIGINT & co. to the application's threads; OpenBLAS's own fork handler stops it before fork().
 *
 * One OpenBLAS thread per call (openblas_set_num_threads(1)): the calls are spread over our kernel pool
 * (mm_f32 in kernels/matmul.c); measured on the 2-core machine, OpenBLAS's pool was no faster, and two pools
 * would oversubscribe the cores.
 */
#define _GNU_SOURCE   /* dladdr */
#include "kernels/matmul.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread_signals.h"
#include "kernels/device.h"
#include "pyaclnn_stub.h"

typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
                         int lda, const float *b, int ldb, float beta, float *c, int ldc);

__attribute__((unused)) static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static sgemm_fn blas_sgemm;
__attribute__((unused)) static char blas_name[160];   /* "OpenBLAS 0.3.x ..." or why there is none */

#ifdef PYACLNN_BLAS_LIBRARY
static void blas_load(void) {
    Dl_info self;
    if (dladdr((void *)&blas_load, &self) == 0 || self.dli_fname == NULL) {
        snprintf(blas_name, sizeof blas_name, "OpenBLAS not loaded: libopapi's own path is unknown");
        return;
    }
    char path[4096];
    const char *slash = strrchr(self.dli_fname, '/');
    int dir = slash ? (int)(slash - self.dli_fname) : 1;
    snprintf(path, sizeof path, "%.*s/%s", dir, slash ? self.dli_fname : ".", PYACLNN_BLAS_LIBRARY);
    sigset_t mask, old;
    stub_worker_sigmask(&mask);
    pthread_sigmask(SIG_SETMASK, &mask, &old);   /* OpenBLAS's constructor starts its threads: they inherit it */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (h == NULL) {
        const char *err = dlerror();
        snprintf(blas_name, sizeof blas_name, "OpenBLAS not loaded: %.130s", err ? err : path);
        return;
    }
    void (*set_threads)(int) = (void (*)(int))dlsym(h, "scipy_openblas_set_num_threads");
    char *(*config)(void) = (char *(*)(void))dlsym(h, "scipy_openblas_get_config");
    sgemm_fn fn = (sgemm_fn)dlsym(h, "scipy_cblas_sgemm");
    if (fn == NULL || set_threads == NULL) {
        snprintf(blas_name, sizeof blas_name, "OpenBLAS not loaded: %.100s lacks scipy_cblas_sgemm", path);
        return;
    }
    set_threads(1);
    const char *cfg = config ? config() : "OpenBLAS";
    snprintf(blas_name, sizeof blas_name, "%s", cfg);
    blas_sgemm = fn;
}
#endif

__attribute__((unused)) static int parse_matmul(void) {
    const char *env = getenv("PYACLNN_STUB_MATMUL");
    return env != NULL && strcmp(env, "portable") == 0;
}

__attribute__((unused)) static int portable_forced(void) {
    static op_switch sw;
    return op_switch_value(&sw, parse_matmul);
}

int mm_blas_active(void) {
#ifdef PYACLNN_BLAS_LIBRARY
    if (portable_forced()) return 0;
    pthread_once(&blas_once, blas_load);
    return blas_sgemm != NULL;
#else
    return 0;
#endif
}

int mm_blas_sgemm(const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, int64_t m,
                  int64_t k, int64_t n) {
    if (blas_sgemm == NULL || m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return 0;
    enum { ROW_MAJOR = 101, NO_TRANS = 111 };   /* CBLAS_ORDER, CBLAS_TRANSPOSE */
    blas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b, (int)ldb, 0.0f, c,
               (int)ldc);
    return 1;
}

const char *mm_engine_name(void) {
    static __thread char text[256];
#ifdef PYACLNN_BLAS_LIBRARY
    if (portable_forced()) return "portable blocked loop (PYACLNN_STUB_MATMUL=portable)";
    pthread_once(&blas_once, blas_load);
    if (blas_sgemm != NULL) {
        snprintf(text, sizeof text, "BLAS: %s (scipy-openblas32), one thread per call over the kernel pool",
                 blas_name);
        return text;
    }
    snprintf(text, sizeof text, "portable blocked loop (%s)", blas_name);
    return text;
#else
    snprintf(text, sizeof text, "portable blocked loop (%s)", PYACLNN_BLAS_ABSENT_REASON);
    return text;
#endif
}

PYACLNN_STUB_API const char *pyaclnn_stub_matmul_engine(void) { return mm_engine_name(); }
