/*
 * aclInit / aclFinalize / aclFinalizeReference: the reference-counted init state machine of the
 * real runtime (hicann/runtime src/acl/aclrt_impl/acl.cpp):
 *  - aclInit while initialised: +1 reference, returns ACL_ERROR_REPEAT_INITIALIZE (100002). Like the
 *    real one it logs nothing for this (callers treat 100002 as success), so no message is left.
 *  - aclFinalize tears down whatever the count; a second one returns ACL_ERROR_REPEAT_FINALIZE
 *    (100037). The "finalized" flag starts cleared, so a first aclFinalize without aclInit succeeds,
 *    exactly as on the real runtime.
 *  - aclFinalizeReference drops one reference and tears down on the last; with none left: 100037.
 *  - Re-initialising after a finalize is allowed, but (a real quirk) only with a configuration of
 *    the same content as the first successful aclInit; otherwise ACL_ERROR_INVALID_PARAM.
 *  - configPath: NULL or "" = no configuration. A path that does not resolve, or is not a readable
 *    regular file -> ACL_ERROR_INVALID_FILE (100003); a non-empty file that is not JSON (or nests
 *    more than 10 levels) -> ACL_ERROR_PARSE_FILE (100006). No key is interpreted.
 *
 * Runtime calls made before aclInit: the real aclrt* entry points do not check the init state (only
 * the dump/profiling APIs do), so the emulator's aclrt* calls work without aclInit too.
 *
 * Teardown (aclFinalize, or the last aclFinalizeReference) stops and joins the worker threads of
 * destroyed streams, so a program that released its streams and devices first ends with no thread of
 * the runtime left; streams still live keep their workers (their work may never end).
 *
 * Setting PYACLNN_STUB_LEAK_REPORT=1 prints the live-object counts to stderr at each teardown.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_internal.h"

#define MAX_CONFIG_BYTES (10 * 1024 * 1024)

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t init_refcount;
static int finalized;
static int have_first_config;
static uint64_t first_config_hash;

/* fork(): init_mu is held across it (as libnnopbase does with its locks), so that a child, which
 * may call aclFinalize on its way out, never inherits it held by a thread it does not have. */
static void init_lock(void) { pthread_mutex_lock(&init_mu); }
static void init_unlock(void) { pthread_mutex_unlock(&init_mu); }
__attribute__((constructor)) static void register_fork_handlers(void) { pthread_atfork(init_lock, init_unlock, init_unlock); }

static uint64_t fnv1a(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Reads the whole configuration file; returns 0 or the status (reported). *text may be NULL. */
static aclError read_config(const char *path, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (path == NULL || path[0] == '\0') return ACL_SUCCESS;
    char real[PATH_MAX];
    if (realpath(path, real) == NULL)
        return RT_REPORT(ACL_ERROR_INVALID_FILE, "aclInit", "config file \"%s\" is invalid: %s", path,
                         strerror(errno));
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
        return RT_REPORT(ACL_ERROR_INVALID_FILE, "aclInit", "config file \"%s\" is not a regular file",
                         path);
    if (st.st_size > MAX_CONFIG_BYTES)
        return RT_REPORT(ACL_ERROR_INVALID_FILE, "aclInit",
                         "config file \"%s\" has %lld bytes, more than the %d allowed", path,
                         (long long)st.st_size, MAX_CONFIG_BYTES);
    FILE *f = fopen(real, "rb");
    if (!f)
        return RT_REPORT(ACL_ERROR_INVALID_FILE, "aclInit", "config file \"%s\" cannot be opened: %s",
                         path, strerror(errno));
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    int read_failed = buf == NULL || ferror(f);
    fclose(f);
    if (read_failed) {
        free(buf);
        return RT_REPORT(ACL_ERROR_INVALID_FILE, "aclInit", "config file \"%s\" cannot be read", path);
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return ACL_SUCCESS;
}

static void leak_report(const char *when) {
    const char *flag = getenv("PYACLNN_STUB_LEAK_REPORT");
    if (!flag || !flag[0] || flag[0] == '0') return;
    pyaclnn_stub_counts c;
    pyaclnn_stub_live_counts(&c);
    fprintf(stderr,
            "pyaclnn stub (%s): live device allocations %lld (%lld bytes), host allocations %lld, "
            "streams %lld, events %lld, contexts %lld, tensors %lld, scalars %lld, arrays %lld, "
            "tensor lists %lld, scalar lists %lld, executors %lld, host registrations %lld\n",
            when, (long long)c.device_allocations, (long long)c.device_bytes,
            (long long)c.host_allocations, (long long)c.streams, (long long)c.events,
            (long long)c.contexts, (long long)c.tensors, (long long)c.scalars, (long long)c.arrays,
            (long long)c.tensor_lists, (long long)c.scalar_lists, (long long)c.executors,
            (long long)c.host_registrations);
}

ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath) {
    aclError soc_rc = rt_soc_check("aclInit");     /* a bad PYACLNN_STUB_SOC: see soc.c */
    if (soc_rc != ACL_SUCCESS) return soc_rc;
    pthread_mutex_lock(&init_mu);
    if (init_refcount > 0) {
        init_refcount++;
        pthread_mutex_unlock(&init_mu);
        return ACL_ERROR_REPEAT_INITIALIZE;
    }
    char *text;
    size_t len;
    aclError rc = read_config(configPath, &text, &len);
    if (rc == ACL_SUCCESS) {
        char why[160];
        if (rt_json_check(text, len, why, sizeof why) != 0) {
            rc = RT_REPORT(ACL_ERROR_PARSE_FILE, "aclInit", "config file \"%s\" is not valid JSON: %s",
                           configPath, why);
        } else {
            uint64_t hash = fnv1a(text ? text : "", len);
            if (have_first_config && hash != first_config_hash) {
                rc = RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclInit",
                               "config content of \"%s\" differs from the configuration of the first "
                               "aclInit of this process",
                               configPath ? configPath : "(null)");
            } else {
                have_first_config = 1;
                first_config_hash = hash;
                finalized = 0;
                init_refcount = 1;
            }
        }
    }
    free(text);
    pthread_mutex_unlock(&init_mu);
    return rc;
}

/* Caller holds init_mu. */
static void finalize_locked(const char *func) {
    finalized = 1;
    init_refcount = 0;
    rt_streams_join_idle_workers();   /* no thread of ours outlives a clean shutdown */
    leak_report(func);
}

ACL_FUNC_VISIBILITY aclError aclFinalize(void) {
    pthread_mutex_lock(&init_mu);
    aclError rc = ACL_SUCCESS;
    if (finalized)
        rc = RT_REPORT(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "repeatedly finalized");
    else
        finalize_locked("aclFinalize");
    pthread_mutex_unlock(&init_mu);
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount) {
    pthread_mutex_lock(&init_mu);
    aclError rc = ACL_SUCCESS;
    if (init_refcount > 1) {
        init_refcount--;
    } else if (init_refcount == 0) {
        rc = RT_REPORT(ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference",
                       "called repeatedly or without a matching aclInit");
    } else {
        finalize_locked("aclFinalizeReference");
    }
    if (refCount) *refCount = init_refcount;
    pthread_mutex_unlock(&init_mu);
    return rc;
}
