/*
 * A set of live handles (pointer -> kind), so that every public entry point can tell a live
 * object of the right kind from NULL, a stale (freed) pointer, a foreign pointer or an object of
 * another kind without dereferencing it. Thread-safe. Compiled into each library (not exported).
 */
#ifndef PYACLNN_HANDLE_REGISTRY_H
#define PYACLNN_HANDLE_REGISTRY_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const void *key;   /* NULL = empty slot, (void*)1 = tombstone */
    int kind;
} stub_registry_slot;

typedef struct {
    pthread_mutex_t lock;
    stub_registry_slot *slots;
    size_t capacity;   /* power of two (0 before first insert) */
    size_t used;       /* live + tombstones */
    size_t live;
} stub_registry;

#define STUB_REGISTRY_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 }

/* Adds p with its kind; returns 0, or -1 if out of memory. */
int stub_registry_add(stub_registry *r, const void *p, int kind);
/* The kind p was registered with, or 0 if p is not live. */
int stub_registry_kind(stub_registry *r, const void *p);
/* Removes p if it is live with this kind; returns 1 if removed, 0 otherwise. */
int stub_registry_remove(stub_registry *r, const void *p, int kind);
/* Number of live handles of this kind (kind 0 = all). */
size_t stub_registry_count(stub_registry *r, int kind);
/* Calls fn for each live handle of this kind (kind 0 = all), under the lock: fn must not call back
 * into the registry. */
void stub_registry_foreach(stub_registry *r, int kind, void (*fn)(const void *p, int kind, void *ctx),
                           void *ctx);

#endif
