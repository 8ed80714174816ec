/*
 * The worker threads of destroyed streams do not stay (issue 27, point 8: 2000 streams created and
 * destroyed left 2034 threads until aclFinalize).
 *
 *   stream_threads N      creates N streams, destroys them, and counts this process's threads
 *                         (/proc/self/task) on the way; then creates a few streams again (pooled
 *                         objects whose workers have retired) and runs work on them. Prints
 *                         "base B", "created C", "destroyed D S" (D threads S seconds after the last
 *                         destroy, polled until D <= B or 5 s), "reuse ok", "finalized F".
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#include "check.h"

static int threads(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 1) return 2;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    int base = threads();
    printf("base %d\n", base);
    aclrtStream *s = calloc((size_t)n, sizeof *s);
    if (!s) return 2;
    for (int i = 0; i < n; i++) CHECK(aclrtCreateStream(&s[i]));
    printf("created %d\n", threads());
    for (int i = 0; i < n; i++) CHECK(aclrtDestroyStream(s[i]));
    double t0 = now();
    int left = threads();
    while (left > base && now() - t0 < 5.0) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        left = threads();
    }
    printf("destroyed %d %.2f\n", left, now() - t0);

    /* pooled objects come back with a new worker */
    void *p = NULL;
    CHECK(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < 40; i++) CHECK(aclrtCreateStream(&s[i]));
    for (int i = 0; i < 40; i++) {
        unsigned char host[4096];
        CHECK(aclrtMemsetAsync(p, 4096, i, 4096, s[i]));
        CHECK(aclrtSynchronizeStream(s[i]));
        CHECK(aclrtMemcpy(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
        if (host[0] != i || host[4095] != i) {
            fprintf(stderr, "stream %d: memset did not run\n", i);
            return 2;
        }
    }
    for (int i = 0; i < 40; i++) CHECK(aclrtDestroyStream(s[i]));
    CHECK(aclrtFree(p));
    printf("reuse ok\n");
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("finalized %d\n", threads());
    free(s);
    return 0;
}
