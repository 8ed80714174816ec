/*
 * Faults on the emulator's own threads must reach the process's signal handler (issue 27, point 6a):
 * with every signal blocked on a worker, the kernel kills the process at a SIGSEGV there without
 * running any handler, so ASan printed no report for a fault in a stream task or a kernel.
 *
 *   worker_fault masks            starts two streams and the kernels' pool, then prints one line per
 *                                 thread but main: "<stream|other> <tid> <SigBlk hex>" (from
 *                                 /proc/self/task/<tid>/status; stream = a stream worker)
 *   worker_fault stream HOW       a stream task writes to address 0x10 (SIGSEGV on the worker)
 *   worker_fault pool HOW         a part of a kernel-pool job writes to a PROT_NONE page (SIGSEGV on
 *                                 a pool thread; pyaclnn_stub_pool_selftest)
 *     HOW = handler: a SIGSEGV handler of this program reports the faulting thread and _exit(42)s;
 *     HOW = plain: no handler of ours (a sanitizer's handler, if one is loaded, reports the fault).
 * Exit 42 from the handler; killed by SIGSEGV when no handler ran.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "pyaclnn_stub.h"

/* libopapi's test hook of the kernels' worker pool (src/ops/common/op_parallel_hooks.c). */
int pyaclnn_stub_pool_selftest(uint64_t count, uint64_t parts, uint32_t *marks, uint64_t spin_ns);

#include "check.h"

static pid_t main_tid;
static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

static void on_segv(int sig, siginfo_t *info, void *uc) {
    (void)uc;
    char line[160];
    pid_t tid = gettid_();
    int n = snprintf(line, sizeof line, "handled signal %d at %p on %s thread %d\n", sig, info->si_addr,
                     tid == main_tid ? "the main" : "a worker", (int)tid);
    if (write(2, line, (size_t)n) < 0) _exit(43);
    _exit(42);
}

static void fault_task(void *arg) { *(volatile int *)arg = 1; }

static pid_t stream_tids[3];   /* two streams and the default stream */
static void note_tid(void *arg) { *(pid_t *)arg = gettid_(); }

static void print_masks(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) exit(2);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        int tid = atoi(e->d_name);
        if (tid == main_tid) continue;
        char path[64], line[256], blk[64] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "SigBlk: %63s", blk) == 1) break;
        if (f) fclose(f);
        int stream = tid == stream_tids[0] || tid == stream_tids[1] || tid == stream_tids[2];
        printf("%s %d %s\n", stream ? "stream" : "other", tid, blk);
    }
    closedir(d);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s masks | stream HOW | pool HOW\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *how = argc > 2 ? argv[2] : "handler";
    main_tid = gettid_();
    if (strcmp(how, "handler") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s[2];
    for (int i = 0; i < 2; i++) {
        CHECK(aclrtCreateStream(&s[i]));
        CHECK(pyaclnn_stub_stream_submit("worker_fault", s[i], note_tid, NULL, &stream_tids[i]));
        CHECK(aclrtSynchronizeStream(s[i]));
    }
    CHECK(pyaclnn_stub_stream_submit("worker_fault", NULL, note_tid, NULL, &stream_tids[2]));
    CHECK(aclrtSynchronizeStream(NULL));
    if (strcmp(mode, "masks") == 0) {
        uint32_t marks[64] = {0};
        if (pyaclnn_stub_pool_selftest(64, 4, marks, 20000000) < 1) return 2;   /* starts pool threads */
        print_masks();
    } else if (strcmp(mode, "stream") == 0) {
        CHECK(pyaclnn_stub_stream_submit("worker_fault", s[0], fault_task, NULL, (void *)(uintptr_t)0x10));
        CHECK(aclrtSynchronizeStream(s[0]));
        fprintf(stderr, "the faulting task did not end the process\n");
        return 3;
    } else if (strcmp(mode, "pool") == 0) {
        /* part 0 (the submitter's, which then spins 300 ms) marks the first page; part 1, which a pool
         * thread takes meanwhile, writes the second, PROT_NONE page */
        long page = sysconf(_SC_PAGESIZE);
        unsigned char *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || mprotect(m + page, (size_t)page, PROT_NONE) != 0) return 2;
        uint64_t count = (uint64_t)page * 2 / sizeof(uint32_t);
        pyaclnn_stub_pool_selftest(count, 2, (uint32_t *)m, 300000000);
        fprintf(stderr, "the faulting part did not end the process\n");
        return 3;
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    for (int i = 0; i < 2; i++) CHECK(aclrtDestroyStream(s[i]));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
