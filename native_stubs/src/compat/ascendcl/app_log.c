/*
 * aclAppLog (acl_base_rt.h): CANN writes application log lines to its log files, or to stdout
 * when ASCEND_SLOG_PRINT_TO_STDOUT=1. The emulator keeps no log files: it prints the line to stdout
 * when ASCEND_SLOG_PRINT_TO_STDOUT=1 and the level is at least ASCEND_GLOBAL_LOG_LEVEL (0 debug ..
 * 3 error, default 3), and drops it otherwise.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../compat.h"

ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
                                   const char *fmt, ...) {
    const char *to_stdout = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    if (!to_stdout || strcmp(to_stdout, "1") != 0 || !fmt) return;
    const char *lvl = getenv("ASCEND_GLOBAL_LOG_LEVEL");
    int threshold = (lvl && lvl[0]) ? atoi(lvl) : ACL_ERROR;
    if ((int)logLevel < threshold) return;
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    const char *name = ((int)logLevel >= 0 && (int)logLevel <= 3) ? names[logLevel] : "EVENT";
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    printf("[%s] APP(%d):%s:%u %s: %s\n", name, (int)getpid(), file ? file : "?", line,
           func ? func : "?", text);
    fflush(stdout);
}
