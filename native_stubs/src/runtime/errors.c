/*
 * Error reporting: the calling thread's recent-error text (aclGetRecentErrMsg) and last runtime
 * error code (aclrtGetLastError / aclrtPeekAtLastError).
 *
 * Each failure adds one line in the vendor's layout
 *     [PID: 1234] 2026-12-01-01:02:03.456.789 aclrtMemcpy(107000): count 64 > destMax 32
 * (local time, then milliseconds and microseconds). Lines are kept newest first. Reading returns
 * them all and clears them; the returned string stays valid until the same thread reads again.
 * A successful call leaves pending messages alone. The pending text is capped (oldest lines go
 * first) so a program that never reads it does not grow without bound.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"

#define PENDING_LIMIT (64 * 1024)   /* bytes of pending text kept per thread */
#define LINE_LIMIT 2048             /* bytes of one message line              */

typedef struct {
    char *pending;     /* newest line first, NUL-terminated */
    size_t len, cap;
    char *returned;    /* text handed out by the last aclGetRecentErrMsg */
} error_buffer;

static _Thread_local error_buffer *tls_errors;
static _Thread_local aclError tls_last_error;

static pthread_key_t errors_key;
static pthread_once_t errors_key_once = PTHREAD_ONCE_INIT;

static void free_buffer(void *p) {
    error_buffer *b = p;
    if (!b) return;
    free(b->pending);
    free(b->returned);
    free(b);
}

static void make_key(void) { (void)pthread_key_create(&errors_key, free_buffer); }

/* The thread's buffer, created on first use and freed when the thread exits. */
static error_buffer *thread_buffer(void) {
    if (tls_errors) return tls_errors;
    pthread_once(&errors_key_once, make_key);
    error_buffer *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    tls_errors = b;
    (void)pthread_setspecific(errors_key, b);
    return b;
}

/* UTC broken-down time by arithmetic (days to civil date, H. Hinnant's algorithm): no lock taken. */
static void utc_by_arithmetic(time_t t, struct tm *tm) {
    long long days = (long long)t / 86400, secs = (long long)t % 86400;
    if (secs < 0) secs += 86400, days--;
    tm->tm_hour = (int)(secs / 3600);
    tm->tm_min = (int)(secs / 60 % 60);
    tm->tm_sec = (int)(secs % 60);
    long long z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    long long day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
    tm->tm_year = (int)(yoe + era * 400 + (month <= 2) - 1900);
    tm->tm_mon = (int)(month - 1);
    tm->tm_mday = (int)day;
}

static void format_time(char *out, size_t n) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* localtime_r takes glibc's time-zone lock, which a child forked while another thread of the
     * parent held it would wait for forever: a forked child's messages carry UTC instead. */
    if (rt_forked_child()) utc_by_arithmetic(ts.tv_sec, &tm);
    else localtime_r(&ts.tv_sec, &tm);
    long us = ts.tv_nsec / 1000;
    snprintf(out, n, "%04d-%02d-%02d-%02d:%02d:%02d.%03ld.%03ld", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us / 1000, us % 1000);
}

/* Puts line (with its '\n') in front of the pending text, dropping the oldest lines if too long. */
static void prepend_line(error_buffer *b, const char *line, size_t n) {
    size_t keep = b->len;
    if (n + keep > PENDING_LIMIT) {
        keep = n < PENDING_LIMIT ? PENDING_LIMIT - n : 0;
        while (keep > 0 && b->pending[keep - 1] != '\n') keep--;   /* whole lines only */
    }
    size_t need = n + keep + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need) cap *= 2;
        char *grown = realloc(b->pending, cap);
        if (!grown) return;   /* out of memory: the message is lost, the status is not */
        b->pending = grown;
        b->cap = cap;
    }
    memmove(b->pending + n, b->pending, keep);
    memcpy(b->pending, line, n);
    b->len = n + keep;
    b->pending[b->len] = '\0';
}

PYACLNN_STUB_API void pyaclnn_stub_vreport(int code, const char *func, const char *fmt, va_list ap) {
    tls_last_error = code;
    error_buffer *b = thread_buffer();
    if (!b) return;
    char when[64], line[LINE_LIMIT];
    format_time(when, sizeof when);
    int head = snprintf(line, sizeof line, "[PID: %d] %s %s(%d): ", (int)getpid(), when,
                        func ? func : "unknown", code);
    if (head < 0) return;
    size_t n = (size_t)head < sizeof line ? (size_t)head : sizeof line - 1;
    if (fmt) {
        int body = vsnprintf(line + n, sizeof line - n, fmt, ap);
        if (body > 0) n += (size_t)body < sizeof line - n ? (size_t)body : sizeof line - n - 1;
    }
    if (n >= sizeof line - 1) n = sizeof line - 2;   /* leave room for the newline */
    line[n++] = '\n';
    line[n] = '\0';
    prepend_line(b, line, n);
}

PYACLNN_STUB_API void pyaclnn_stub_report(int code, const char *func, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pyaclnn_stub_vreport(code, func, fmt, ap);
    va_end(ap);
}

ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void) {
    error_buffer *b = tls_errors;
    if (!b) return NULL;
    free(b->returned);
    b->returned = NULL;
    if (b->len == 0) return NULL;
    b->returned = b->pending;   /* hand the pending text over; it stays valid until the next read */
    b->pending = NULL;
    b->len = b->cap = 0;
    return b->returned;
}

ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level) {
    if (level != ACL_RT_THREAD_LEVEL)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtGetLastError",
                         "level %d is not supported; only ACL_RT_THREAD_LEVEL (0) is", (int)level);
    aclError e = tls_last_error;
    tls_last_error = ACL_SUCCESS;
    return e;
}

ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level) {
    if (level != ACL_RT_THREAD_LEVEL)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtPeekAtLastError",
                         "level %d is not supported; only ACL_RT_THREAD_LEVEL (0) is", (int)level);
    return tls_last_error;
}
