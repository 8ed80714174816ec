/*
 * Msprof* entry points of CANN's profiling library (profiling/aprof_pub.h) that torch_npu binds at
 * load time. Folded into our libascendcl. The emulator has no profiler: registration succeeds (the
 * callback is kept but never invoked, because profiling never starts), the report functions refuse
 * with -1 (aprof_pub.h names only MSPROF_ERROR_NONE = 0) and a message, and the two helpers do what
 * they say (a stable hash of the string; a monotonic cycle count in nanoseconds).
 */
#include <pthread.h>
#include <time.h>

#include "../compat.h"

#define MAX_MODULES 64
static pthread_mutex_t callbacks_mu = PTHREAD_MUTEX_INITIALIZER;
static ProfCommandHandle callbacks[MAX_MODULES];

MSVP_PROF_API int32_t MsprofRegisterCallback(uint32_t moduleId, ProfCommandHandle handle) {
    if (moduleId >= MAX_MODULES || !handle) {
        pyaclnn_stub_report(PYACLNN_COMPAT_MSPROF_ERROR, "MsprofRegisterCallback",
                            "%s", !handle ? "handle is NULL" : "moduleId is out of range (0..63)");
        return PYACLNN_COMPAT_MSPROF_ERROR;
    }
    pthread_mutex_lock(&callbacks_mu);
    callbacks[moduleId] = handle;   /* never called: profiling never starts on the emulator */
    pthread_mutex_unlock(&callbacks_mu);
    pyaclnn_stub_compat_trace("MsprofRegisterCallback", "module %u registered (profiling never starts)",
                              moduleId);
    return 0;
}

#define NO_PROFILER "profiling; the emulator has no profiler"
MSVP_PROF_API int32_t MsprofReportApi(uint32_t nonPersistantFlag, const struct MsprofApi *api) {
    return pyaclnn_stub_compat_unsupported(PYACLNN_COMPAT_MSPROF_ERROR, "MsprofReportApi", NO_PROFILER);
}
MSVP_PROF_API int32_t MsprofReportCompactInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length) {
    return pyaclnn_stub_compat_unsupported(PYACLNN_COMPAT_MSPROF_ERROR, "MsprofReportCompactInfo", NO_PROFILER);
}
MSVP_PROF_API int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length) {
    return pyaclnn_stub_compat_unsupported(PYACLNN_COMPAT_MSPROF_ERROR, "MsprofReportAdditionalInfo", NO_PROFILER);
}

/* FNV-1a 64: stable across runs, never 0 for the strings profilers pass. */
MSVP_PROF_API uint64_t MsprofGetHashId(const char *hashInfo, size_t length) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; hashInfo && i < length; i++) {
        h ^= (unsigned char)hashInfo[i];
        h *= 1099511628211ull;
    }
    return h;
}

MSVP_PROF_API uint64_t MsprofSysCycleTime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
