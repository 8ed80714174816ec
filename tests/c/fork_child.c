/*
 * A child forked while the parent has work queued (issue 27, point 2). The child has none of the
 * parent's stream workers: every context and device call must refuse at once with 507899 rather than
 * wait for them, and the child must exit promptly whatever it calls on its way out.
 *
 *   fork_child        prints one line per call the child makes, "<call> <status> <seconds>", then
 *                     "child exit <status>" as the parent saw it and "parent ok" once the parent's
 *                     own work finished. Exit 0 unless a parent call fails.
 *
 * The child is killed by SIGALRM after 10 s (a hang), which the parent reports.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "pyaclnn_stub.h"

#include "check.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_task(void *arg) {
    struct timespec ts = {0, (long)(size_t)arg * 1000000L};
    nanosleep(&ts, NULL);
}

/* One line per child call; written with write(2) so nothing is lost in a stdio buffer. */
static void report(const char *call, int status, double t0) {
    char line[160];
    int n = snprintf(line, sizeof line, "%s %d %.2f\n", call, status, now() - t0);
    if (write(1, line, (size_t)n) < 0) _exit(3);
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtContext user_ctx, default_ctx;
    CHECK(aclrtGetCurrentContext(&default_ctx));
    CHECK(aclrtCreateContext(&user_ctx, 0));   /* current now */
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    /* 900 ms of work queued on a stream of the user context and on the default stream */
    CHECK(pyaclnn_stub_stream_submit("fork_child", s, sleep_task, NULL, (void *)(size_t)900));
    CHECK(aclrtSetCurrentContext(default_ctx));
    CHECK(pyaclnn_stub_stream_submit("fork_child", NULL, sleep_task, NULL, (void *)(size_t)900));
    fflush(stdout);

    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        alarm(10);
        double t0 = now();
        aclrtContext c = NULL;
        report("aclrtSetCurrentContext", aclrtSetCurrentContext(user_ctx), t0);
        report("aclrtCreateContext", aclrtCreateContext(&c, 0), t0);
        report("aclrtDestroyContext", aclrtDestroyContext(user_ctx), t0);
        report("aclrtResetDevice", aclrtResetDevice(0), t0);
        report("aclrtResetDeviceForce", aclrtResetDeviceForce(0), t0);
        report("aclrtDestroyStream", aclrtDestroyStream(s), t0);
        report("aclrtSynchronizeDevice", aclrtSynchronizeDevice(), t0);
        report("aclFinalize", aclFinalize(), t0);
        exit(0);   /* atexit handlers and library destructors run too */
    }
    double t0 = now();
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) printf("child exit %d %.2f\n", WEXITSTATUS(status), now() - t0);
    else printf("child signal %d %.2f\n", WIFSIGNALED(status) ? WTERMSIG(status) : -1, now() - t0);

    /* the parent is unaffected: its work runs, its context and device go as usual */
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclrtSetCurrentContext(user_ctx));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtDestroyContext(user_ctx));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("parent ok\n");
    return 0;
}
