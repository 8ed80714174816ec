/*
 * Stress of the kernels' worker pool (native_stubs/src/ops/common/op_parallel.c) through its test hook
 * pyaclnn_stub_pool_selftest: several threads submit jobs of random sizes at once (one gets the pool,
 * the others run their parts inline) and check that every item ran once, in its part. Meant for the
 * TSan build (docs/hardening.md):
 *
 *   cc -std=c11 -O1 -g -fsanitize=thread -pthread tests/c/pool_stress.c -o pool_stress -L build/tsan/lib -lopapi \
 *      -Wl,-rpath,build/tsan/lib && TSAN_OPTIONS=halt_on_error=1 setarch $(uname -m) -R ./pool_stress
 * prints "pool stress OK" (exit 0), or "BAD ..." (exit 1).
 */
#define _POSIX_C_SOURCE 200809L /* rand_r under -std=c11 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
int pyaclnn_stub_pool_selftest(uint64_t count, uint64_t parts, uint32_t *marks, uint64_t spin_ns); /* libopapi */
static void *run(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint32_t *m = malloc(5000 * 4);
    for (int it = 0; it < 300; it++) {
        uint64_t count = rand_r(&seed) % 5000 + 1, parts = rand_r(&seed) % 8 + 1;
        for (uint64_t i = 0; i < count; i++) m[i] = 0;
        pyaclnn_stub_pool_selftest(count, parts, m, it % 3 ? 0 : 20000);
        uint64_t p = parts < count ? parts : count;
        for (uint64_t k = 0; k < p; k++)
            for (uint64_t i = count * k / p; i < count * (k + 1) / p; i++)
                if (m[i] != k + 1) { printf("BAD count=%llu parts=%llu item=%llu\n", (unsigned long long)count, (unsigned long long)parts, (unsigned long long)i); exit(1); }
    }
    free(m);
    return NULL;
}
int main(void) {
    pthread_t t[6];
    for (int i = 0; i < 6; i++) pthread_create(&t[i], NULL, run, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
    printf("pool stress OK\n");
    return 0;
}
