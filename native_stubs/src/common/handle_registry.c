#include "handle_registry.h"

#include <stdlib.h>

#define TOMBSTONE ((const void *)1)

static size_t hash_ptr(const void *p, size_t mask) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & mask;
}

/* Index of p's slot, or of the empty slot where it would go (capacity > 0). */
static size_t find_slot(const stub_registry *r, const void *p, int *found) {
    size_t mask = r->capacity - 1, i = hash_ptr(p, mask), first_free = (size_t)-1;
    for (;;) {
        const void *k = r->slots[i].key;
        if (k == p) { *found = 1; return i; }
        if (k == NULL) { *found = 0; return first_free != (size_t)-1 ? first_free : i; }
        if (k == TOMBSTONE && first_free == (size_t)-1) first_free = i;
        i = (i + 1) & mask;
    }
}

static int grow(stub_registry *r) {
    size_t cap = r->capacity ? r->capacity : 64;
    while (r->live * 2 >= cap) cap *= 2;   /* keep load (live) under 1/2 after rehash */
    stub_registry_slot *old = r->slots;
    size_t old_cap = r->capacity;
    stub_registry_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    r->slots = slots;
    r->capacity = cap;
    r->used = r->live;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].key && old[i].key != TOMBSTONE) {
            int found;
            size_t j = find_slot(r, old[i].key, &found);
            r->slots[j] = old[i];
        }
    }
    free(old);
    return 0;
}

int stub_registry_add(stub_registry *r, const void *p, int kind) {
    int rc = 0;
    pthread_mutex_lock(&r->lock);
    if ((r->used + 1) * 4 >= r->capacity * 3 && grow(r) != 0) {
        rc = -1;
    } else {
        int found;
        size_t i = find_slot(r, p, &found);
        if (!found) {
            if (r->slots[i].key == NULL) r->used++;
            r->live++;
        }
        r->slots[i].key = p;
        r->slots[i].kind = kind;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int stub_registry_kind(stub_registry *r, const void *p) {
    if (p == NULL || p == TOMBSTONE) return 0;
    int kind = 0;
    pthread_mutex_lock(&r->lock);
    if (r->capacity) {
        int found;
        size_t i = find_slot(r, p, &found);
        if (found) kind = r->slots[i].kind;
    }
    pthread_mutex_unlock(&r->lock);
    return kind;
}

int stub_registry_remove(stub_registry *r, const void *p, int kind) {
    if (p == NULL || p == TOMBSTONE) return 0;
    int removed = 0;
    pthread_mutex_lock(&r->lock);
    if (r->capacity) {
        int found;
        size_t i = find_slot(r, p, &found);
        if (found && r->slots[i].kind == kind) {
            r->slots[i].key = TOMBSTONE;
            r->live--;
            removed = 1;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return removed;
}

size_t stub_registry_count(stub_registry *r, int kind) {
    size_t n = 0;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->capacity; i++) {
        const void *k = r->slots[i].key;
        if (k && k != TOMBSTONE && (kind == 0 || r->slots[i].kind == kind)) n++;
    }
    pthread_mutex_unlock(&r->lock);
    return n;
}

void stub_registry_foreach(stub_registry *r, int kind, void (*fn)(const void *p, int kind, void *ctx),
                           void *ctx) {
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->capacity; i++) {
        const void *k = r->slots[i].key;
        if (k && k != TOMBSTONE && (kind == 0 || r->slots[i].kind == kind)) fn(k, r->slots[i].kind, ctx);
    }
    pthread_mutex_unlock(&r->lock);
}
