/*
 * Sanitizer death marker: a small library that CI (.ci/run) preloads, beside the ASan and UBSan
 * runtimes, into every process of the sanitizer run (pytest, the fuzzer, and the subprocesses the
 * tests start). When a sanitizer report kills a process, the hook creates an empty file
 * $PYACLNN_SANITIZER_DEATHS/died.<pid>; CI fails if any such file exists, so a report fails the run
 * even in a subprocess whose exit status no test looks at. The report itself is on that process's
 * stderr. Without PYACLNN_SANITIZER_DEATHS set the hook does nothing.
 *
 *     cc -shared -fPIC -o death_marker.so tests/c/sanitizer_death_marker.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*set_death_fn)(void (*)(void));

/* Called by the sanitizer runtime in the dying process, after it printed the report. */
static void mark(void) {
    const char *dir = getenv("PYACLNN_SANITIZER_DEATHS");
    char path[4096];
    if (!dir) return;
    snprintf(path, sizeof path, "%s/died.%d", dir, (int)getpid());
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) close(fd);
}

/* Each sanitizer runtime (libasan, libubsan) keeps its own death callbacks: register with every one. */
static int each_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "san")) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
    set_death_fn set = h ? (set_death_fn)dlsym(h, "__sanitizer_set_death_callback") : NULL;
    if (set) set(mark);
    if (h) dlclose(h);
    return 0;
}

__attribute__((constructor)) static void install(void) { dl_iterate_phdr(each_object, NULL); }
