/*
 * Switches for the hardware details the public sources leave open (spec section C). They are read
 * once, at the first phase 1 (GetWorkspaceSize) of the process, and kept (runtime/switches.c: a program
 * that changes them between calls calls pyaclnn_stub_reread_switches()); unset or empty means the spec's
 * stated default (except Q11: see the note below), the first value listed.
 *
 *   PYACLNN_STUB_ARNQ_TILING_REJECT  phase2 | phase1      Q8  where kernel-selection / tiling
 *                                                             rejections surface (phase-2 561103 |
 *                                                             phase-1 561002)
 *   PYACLNN_STUB_ARNQ_TREE64         adjacent | halves    Q2  order inside one 64-lane reduce-sum
 *   PYACLNN_STUB_ARNQ_SCALAR_RSTD    float | fma | double Q4  scalar 1/sqrt(S*avg+eps) (A2, 950 single row)
 *   PYACLNN_STUB_ARNQ_MULA           fused | unfused      Q5  950 Newton-Raphson multiply-accumulate
 *   PYACLNN_STUB_ARNQ_MAX_NAN        propagate | ignore   Q7  NaN in the vector row max
 *   PYACLNN_STUB_ARNQ_FP8_NAN        zero | positive |    Q11 FP8 code of a NaN quotient: 0x00, the positive
 *                                    keep                     NaN code, or the NaN code with the NaN's sign
 *   PYACLNN_STUB_ARNQ_HIF8_NAN       zero | nan           Q11 HiF8 code of a NaN quotient: 0x00 or 0x80
 *
 * Q11 note: the kernel casts with SatMode::SAT and CTRL[60] cleared (B.9.3), as GroupedDynamicMxQuant
 * does; the vendor Cast documentation says a NaN then becomes 0x00 while CTRL[50] = 0 (the default),
 * for FP8 and HiF8 alike (grouped_dynamic_mx_quant.md 4.6). "zero" follows that documentation; the
 * NaN codes Q11 only assumed stay available as "positive" / "keep" and "nan".
 *   PYACLNN_STUB_ARNQ_OVERFLOW       infnan | saturation  Q3  xOut narrowing overflow mode
 *   PYACLNN_STUB_ARNQ_UB_950         bytes (254976)       Q10 UB size behind the 950 template choice
 *                                                             (16 KiB .. 4 MiB)
 *   PYACLNN_STUB_ARNQ_THREADS        n (0 = automatic)        host threads the rows are spread over
 *   PYACLNN_STUB_ARNQ_STREAM         auto | always | never    streaming (non-temporal) stores for the
 *                                                             outputs; auto: when they total 32 MiB or
 *                                                             more (never changes results)
 *   PYACLNN_STUB_ARNQ_ISA            auto | generic           generic: the portable loops even where the
 *                                                             AVX2 ones could run (never changes results)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arnq.h"

#define UB_950_DEFAULT 254976 /* the vendor arch35 tiling UT's platform value */

/* Picks the index of `value` in the NULL-terminated `names` (index 0 = default when unset). */
static int choose(const char *var, const char *const *names, int *out, char *why, size_t why_size) {
    const char *v = getenv(var);
    if (v == NULL || *v == '\0') {
        *out = 0;
        return 0;
    }
    for (int i = 0; names[i]; i++) {
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    int used = snprintf(why, why_size, "%s=%s is not a known value: use", var, v);
    for (int i = 0; names[i] && used > 0 && (size_t)used < why_size; i++)
        used += snprintf(why + used, why_size - (size_t)used, "%s '%s'%s", i ? "," : "", names[i],
                         i ? "" : " (default)");
    return -1;
}

static int integer(const char *var, int64_t deflt, int64_t lo, int64_t hi, int64_t *out, char *why,
                   size_t why_size) {
    const char *v = getenv(var);
    if (v == NULL || *v == '\0') {
        *out = deflt;
        return 0;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end != '\0' || x < lo || x > hi) {
        snprintf(why, why_size, "%s=%s is not an integer in [%lld, %lld]", var, v, (long long)lo,
                 (long long)hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_options(arnq_options *opt, char *why, size_t why_size) {
    static const char *const reject[] = {"phase2", "phase1", NULL};
    static const char *const tree[] = {"adjacent", "halves", NULL};
    static const char *const rstd[] = {"float", "fma", "double", NULL};
    static const char *const mula[] = {"fused", "unfused", NULL};
    static const char *const max_nan[] = {"propagate", "ignore", NULL};
    static const char *const fp8_nan[] = {"zero", "positive", "keep", NULL};
    static const char *const hif8_nan[] = {"zero", "nan", NULL};
    static const char *const overflow[] = {"infnan", "saturation", NULL};
    static const char *const stream[] = {"auto", "always", "never", NULL};
    static const char *const isa[] = {"auto", "generic", NULL};
    int64_t threads = 0;
    memset(opt, 0, sizeof *opt);
    if (choose("PYACLNN_STUB_ARNQ_TILING_REJECT", reject, &opt->reject_in_phase1, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_TREE64", tree, &opt->tree_halves, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_SCALAR_RSTD", rstd, &opt->scalar_rstd, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_MULA", mula, &opt->mula_unfused, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_MAX_NAN", max_nan, &opt->max_nan_ignore, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_FP8_NAN", fp8_nan, &opt->fp8_nan, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_HIF8_NAN", hif8_nan, &opt->hif8_nan_code, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_OVERFLOW", overflow, &opt->xout_saturate, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_STREAM", stream, &opt->stream, why, why_size) ||
        choose("PYACLNN_STUB_ARNQ_ISA", isa, &opt->isa_generic, why, why_size) ||
        integer("PYACLNN_STUB_ARNQ_UB_950", UB_950_DEFAULT, 16384, (int64_t)4 << 20, &opt->ub_950, why,
                why_size) ||
        integer("PYACLNN_STUB_ARNQ_THREADS", 0, 0, 1024, &threads, why, why_size))
        return -1;
    opt->threads = (int)threads;
    return 0;
}

/* What the environment said at the current switch generation: the options, or why they are wrong. */
static struct {
    pthread_mutex_t lock;
    unsigned generation;   /* 0: not read yet */
    int status;
    arnq_options opt;
    char why[240];
} cached = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}, ""};

int arnq_options_read(arnq_options *opt, char *why, size_t why_size) {
    unsigned g = pyaclnn_stub_switch_generation();
    pthread_mutex_lock(&cached.lock);
    if (cached.generation != g) {
        cached.why[0] = '\0';
        cached.status = parse_options(&cached.opt, cached.why, sizeof cached.why);
        cached.generation = g;
    }
    int status = cached.status;
    *opt = cached.opt;
    if (status && why_size) snprintf(why, why_size, "%s", cached.why);
    pthread_mutex_unlock(&cached.lock);
    return status;
}
