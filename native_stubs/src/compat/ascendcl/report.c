/*
 * How compatibility entry points fail: one message for aclGetRecentErrMsg (the runtime's own
 * reporter, so the vendor layout and the thread's last error are the same as everywhere else) and,
 * when PYACLNN_STUB_TRACE_COMPAT=1, one line on stderr per call, so a user can see which
 * CANN features their torch_npu program reached that the emulator does not have.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compat.h"

static int trace_on;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static void read_trace_flag(void) {
    const char *v = getenv("PYACLNN_STUB_TRACE_COMPAT");
    trace_on = v && v[0] && strcmp(v, "0") != 0;
}

PYACLNN_STUB_API void pyaclnn_stub_compat_trace(const char *func, const char *fmt, ...) {
    pthread_once(&trace_once, read_trace_flag);
    if (!trace_on) return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pyaclnn-stub compat: %s: %s\n", func ? func : "?", text);
}

PYACLNN_STUB_API int pyaclnn_stub_compat_unsupported(int code, const char *func, const char *what) {
    pyaclnn_stub_report(code, func,
                        "%s is not supported by the pyaclnn CPU emulator (%s); the entry point exists "
                        "only so that CANN consumers such as torch_npu load",
                        func, what);
    pyaclnn_stub_compat_trace(func, "not supported (%s), returned %d", what, code);
    return code;
}
