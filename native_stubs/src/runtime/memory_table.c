/*
 * The ranges of memory the runtime knows: device allocations, pinned host allocations and host
 * ranges registered for device access. A sorted array searched by binary search; ranges never
 * overlap. Lookups (every copy checks two pointers) take a shared lock.
 *
 * Each range owns a reference-counted rt_mem_block (see rt_internal.h): pinning happens under the
 * table lock, so a range found and pinned cannot have its memory released until it is unpinned,
 * whatever another thread frees meanwhile.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static rt_mem_range *ranges;
static size_t n_ranges, cap_ranges;
static int64_t device_allocs, device_bytes, host_allocs, host_registered;

/* Index of the first range whose base is > p. Caller holds the lock. */
static size_t upper_bound(uintptr_t p) {
    size_t lo = 0, hi = n_ranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranges[mid].base <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void count(const rt_mem_range *r, int sign) {
    if (r->kind == RT_MEM_DEVICE) {
        device_allocs += sign;
        device_bytes += sign * (int64_t)r->requested;
    } else if (r->kind == RT_MEM_PINNED) {
        host_allocs += sign;
    } else if (r->kind == RT_MEM_REGISTERED) {
        host_registered += sign;
    }
}

void rt_mem_unpin(rt_mem_block *block) {
    if (!block || atomic_fetch_sub(&block->refs, 1) != 1) return;
    if (block->owned) free(block->mem);
    free(block);
}

int rt_mem_table_insert(const rt_mem_range *r) {
    rt_mem_block *block = malloc(sizeof *block);
    if (!block) return -1;
    atomic_init(&block->refs, 1);   /* the table's reference */
    block->mem = (void *)r->base;
    block->owned = r->kind != RT_MEM_REGISTERED;
    block->device = r->kind == RT_MEM_DEVICE ? r->device : -1;
    pthread_rwlock_wrlock(&table_lock);
    if (n_ranges == cap_ranges) {
        size_t cap = cap_ranges ? cap_ranges * 2 : 256;
        rt_mem_range *grown = realloc(ranges, cap * sizeof *grown);
        if (!grown) {
            pthread_rwlock_unlock(&table_lock);
            free(block);
            return -1;
        }
        ranges = grown;
        cap_ranges = cap;
    }
    size_t at = upper_bound(r->base);
    memmove(ranges + at + 1, ranges + at, (n_ranges - at) * sizeof *ranges);
    ranges[at] = *r;
    ranges[at].block = block;
    n_ranges++;
    count(r, +1);
    pthread_rwlock_unlock(&table_lock);
    return 0;
}

int rt_mem_table_remove(uintptr_t base, rt_mem_kind kind, rt_mem_range *out) {
    rt_mem_block *block = NULL;
    pthread_rwlock_wrlock(&table_lock);
    size_t at = upper_bound(base);
    if (at > 0 && ranges[at - 1].base == base && ranges[at - 1].kind == kind) {
        if (out) *out = ranges[at - 1];
        block = ranges[at - 1].block;
        count(&ranges[at - 1], -1);
        memmove(ranges + at - 1, ranges + at, (n_ranges - at) * sizeof *ranges);
        n_ranges--;
    }
    pthread_rwlock_unlock(&table_lock);
    if (out) out->block = NULL;   /* not the caller's to use: it may be gone once unpinned below */
    rt_mem_unpin(block);          /* the table's reference: released now unless queued work pins it */
    return block != NULL;
}

static int find(uintptr_t p, rt_mem_range *out, int pin) {
    int found = 0;
    pthread_rwlock_rdlock(&table_lock);
    size_t at = upper_bound(p);
    if (at > 0 && p - ranges[at - 1].base < ranges[at - 1].size) {
        *out = ranges[at - 1];
        if (pin) atomic_fetch_add(&out->block->refs, 1);   /* the table's reference keeps it alive here */
        else out->block = NULL;
        found = 1;
    }
    pthread_rwlock_unlock(&table_lock);
    return found;
}

int rt_mem_table_find(uintptr_t p, rt_mem_range *out) { return find(p, out, 0); }

int rt_mem_table_find_pin(uintptr_t p, rt_mem_range *out) { return find(p, out, 1); }

int rt_mem_table_overlaps(uintptr_t p, size_t n) {
    int overlap = 0;
    pthread_rwlock_rdlock(&table_lock);
    size_t at = upper_bound(p);
    if (at > 0 && p - ranges[at - 1].base < ranges[at - 1].size) overlap = 1;   /* starts inside one */
    if (at < n_ranges && ranges[at].base - p < n) overlap = 1;                   /* covers the next  */
    pthread_rwlock_unlock(&table_lock);
    return overlap;
}

void rt_mem_table_totals(int64_t *dev_allocs, int64_t *dev_bytes, int64_t *pinned_allocs,
                         int64_t *registered) {
    pthread_rwlock_rdlock(&table_lock);
    *dev_allocs = device_allocs;
    *dev_bytes = device_bytes;
    *pinned_allocs = host_allocs;
    *registered = host_registered;
    pthread_rwlock_unlock(&table_lock);
}
