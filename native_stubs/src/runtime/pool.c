/*
 * Free lists of the pooled runtime objects (contexts, streams, events). Objects are never freed, so
 * a stale handle can always be read safely. Reuse is first-in first-out and only starts once
 * `min_idle` objects are waiting, so a destroyed handle stays invalid (rather than silently naming
 * a new object) until at least that many other objects of its kind have been destroyed after it.
 */
#include "rt_internal.h"

#define NEXT(pool, obj) (*(void **)((char *)(obj) + (pool)->next_offset))

void rt_pool_put(rt_pool *pool, void *obj) {
    pthread_mutex_lock(&pool->mu);
    NEXT(pool, obj) = NULL;
    if (pool->tail) NEXT(pool, pool->tail) = obj;
    else pool->head = obj;
    pool->tail = obj;
    pool->idle++;
    pthread_mutex_unlock(&pool->mu);
}

void *rt_pool_take(rt_pool *pool) {
    void *obj = NULL;
    pthread_mutex_lock(&pool->mu);
    if (pool->idle > pool->min_idle) {
        obj = pool->head;
        pool->head = NEXT(pool, obj);
        if (!pool->head) pool->tail = NULL;
        pool->idle--;
    }
    pthread_mutex_unlock(&pool->mu);
    return obj;
}

void rt_pool_for_each_idle(rt_pool *pool, void (*fn)(void *obj)) {
    pthread_mutex_lock(&pool->mu);
    for (void *obj = pool->head; obj; obj = NEXT(pool, obj)) fn(obj);
    pthread_mutex_unlock(&pool->mu);
}
