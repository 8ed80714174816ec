/* The per-operator kernel times of PYACLNN_STUB_KERNEL_TIMES (kernel_times.h). */
#include "kernel_times.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KT_SLOTS 1024   /* more than the operators a process launches; a full table counts into its last slot */

typedef struct {
    const char *key;     /* the launch's op_name pointer: one per operator, stable for the process */
    char name[80];       /* a copy, for the dump at exit (libopapi may be finalised by then) */
    long long calls, ns, cpu_ns, elements;
} kt_slot;

static _Atomic int kt_state = -1;   /* -1 unread, 0 off, 1 on */
static pthread_once_t kt_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t kt_mu = PTHREAD_MUTEX_INITIALIZER;
static kt_slot *kt_tab;
static char *kt_path;

static void kt_dump(void) {
    pthread_mutex_lock(&kt_mu);
    FILE *f = fopen(kt_path, "a");
    if (f) {
        for (int i = 0; i < KT_SLOTS; i++)
            if (kt_tab[i].key)
                fprintf(f, "{\"pid\": %d, \"op\": \"%s\", \"calls\": %lld, \"ns\": %lld, \"cpu_ns\": %lld, "
                        "\"elements\": %lld}\n", (int)getpid(), kt_tab[i].name, kt_tab[i].calls, kt_tab[i].ns,
                        kt_tab[i].cpu_ns, kt_tab[i].elements);
        fclose(f);
    } else {
        fprintf(stderr, "pyaclnn stub: PYACLNN_STUB_KERNEL_TIMES: cannot append to \"%s\"\n", kt_path);
    }
    pthread_mutex_unlock(&kt_mu);
}

/* A forked child reports its own launches only. */
static void kt_child(void) {
    pthread_mutex_init(&kt_mu, NULL);
    memset(kt_tab, 0, KT_SLOTS * sizeof *kt_tab);
}

static void kt_init(void) {
    const char *p = getenv("PYACLNN_STUB_KERNEL_TIMES");
    int on = p && p[0] && strcmp(p, "0") != 0;
    if (on) {
        kt_path = strdup(p);
        kt_tab = calloc(KT_SLOTS, sizeof *kt_tab);
        on = kt_path && kt_tab && atexit(kt_dump) == 0 && pthread_atfork(NULL, NULL, kt_child) == 0;
    }
    atomic_store(&kt_state, on);
}

int nn_kernel_times_on(void) {
    int s = atomic_load_explicit(&kt_state, memory_order_relaxed);
    if (s < 0) {
        pthread_once(&kt_once, kt_init);
        s = atomic_load(&kt_state);
    }
    return s;
}

void nn_kernel_times_add(const char *op, int64_t ns, int64_t cpu_ns, int64_t elements) {
    if (op == NULL) op = "(unnamed)";
    size_t h = ((uintptr_t)op >> 4) % KT_SLOTS;
    pthread_mutex_lock(&kt_mu);
    for (size_t probe = 0; probe < KT_SLOTS - 1 && kt_tab[h].key && kt_tab[h].key != op; probe++)
        h = (h + 1) % KT_SLOTS;
    kt_slot *s = &kt_tab[h];
    if (!s->key) {
        s->key = op;
        snprintf(s->name, sizeof s->name, "%s", op);
    }
    s->calls++;
    s->ns += ns;
    s->cpu_ns += cpu_ns;
    s->elements += elements;
    pthread_mutex_unlock(&kt_mu);
}
