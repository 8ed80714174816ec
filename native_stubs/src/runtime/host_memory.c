/*
 * How much memory the host can give the emulated devices (device memory is host memory here).
 *
 * The limit is the smaller of MemTotal (/proc/meminfo) and every memory limit of the process's
 * cgroups, version 2 (memory.max) and version 1 (memory.limit_in_bytes), from its own cgroup up to
 * the root of the hierarchy (a container sees its own limit at the root of its mount). MemAvailable
 * is not used: it changes from moment to moment, and a device's capacity is read once per process
 * and should not depend on what else ran just before. device.c makes the default capacity of each
 * emulated device from it (rt_device_capacity).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define UNLIMITED_V1 (1ull << 62)   /* cgroup v1 reports "no limit" as a page-rounded INT64_MAX */

/* The first token of a file as a byte count: digits, or "max" (UINT64_MAX). 0 when unreadable. */
static uint64_t read_bytes(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[64] = "";
    int got = fscanf(f, "%63s", buf);
    fclose(f);
    if (got != 1) return 0;
    if (strcmp(buf, "max") == 0) return UINT64_MAX;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    return (*end == '\0' && end != buf) ? (uint64_t)v : 0;
}

static uint64_t mem_total(const char *root) {
    char path[4096];
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kib) == 1) break;
    fclose(f);
    return kib > UINT64_MAX / 1024 ? UINT64_MAX : (uint64_t)kib * 1024;
}

/* The lowest limit in `file` of the cgroup directory base + cg and of each of its ancestors. */
static uint64_t walk_limits(const char *base, const char *cg, const char *file, uint64_t unlimited) {
    char rel[2048];
    if (snprintf(rel, sizeof rel, "%s", cg) >= (int)sizeof rel) return UINT64_MAX;
    size_t n = strcspn(rel, "\r\n");
    rel[n] = '\0';
    uint64_t lowest = UINT64_MAX;
    for (;;) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s%s/%s", base, strcmp(rel, "/") == 0 ? "" : rel, file) < (int)sizeof path) {
            uint64_t v = read_bytes(path);
            if (v != 0 && v < unlimited && v < lowest) lowest = v;
        }
        char *slash = strrchr(rel, '/');
        if (!slash || (slash == rel && rel[1] == '\0')) break;   /* the root done */
        if (slash == rel) rel[1] = '\0';
        else *slash = '\0';
    }
    return lowest;
}

static int lists_memory(const char *controllers) {
    const char *p = controllers;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 6 && strncmp(p, "memory", 6) == 0) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Test hook (tests/test_device_memory.py): the limit read from the tree under `root` (NULL: "/"),
 * in bytes; 0 when MemTotal cannot be read. */
PYACLNN_STUB_API uint64_t pyaclnn_stub_host_memory_limit(const char *root) {
    if (!root) root = "";
    uint64_t limit = mem_total(root);
    if (limit == 0) return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    char line[2560];
    while (f && fgets(line, sizeof line, f)) {
        /* hierarchy-id:controllers:path */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        char base[4096];
        uint64_t v = UINT64_MAX;
        if (strncmp(line, "0:", 2) == 0 && controllers[0] == '\0') {   /* the v2 unified hierarchy */
            snprintf(base, sizeof base, "%s/sys/fs/cgroup", root);
            v = walk_limits(base, cg, "memory.max", UINT64_MAX);
        } else if (lists_memory(controllers)) {                         /* the v1 memory controller */
            snprintf(base, sizeof base, "%s/sys/fs/cgroup/memory", root);
            v = walk_limits(base, cg, "memory.limit_in_bytes", UNLIMITED_V1);
        }
        if (v < limit) limit = v;
    }
    if (f) fclose(f);
    return limit;
}
