/*
 * The emulated chip: its name (aclrtGetSocName), the family operators key their behaviour on
 * (pyaclnn_stub_soc_family) and its nominal device memory. PYACLNN_STUB_SOC picks the name
 * (default "Ascend950PR"); it is read once per process, like the real runtime caches the SoC
 * version it gets from the driver.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define DEFAULT_SOC "Ascend950PR"
#define GIB (1024ull * 1024ull * 1024ull)

static char soc_name[128];
static pyaclnn_soc_family soc_family;
static uint64_t soc_hbm;
static pthread_once_t soc_once = PTHREAD_ONCE_INIT;

static int starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Per-device memory of the boards these chips ship on (public product data, rounded to GiB). */
static uint64_t hbm_of(const char *name) {
    if (starts_with(name, "Ascend910B4")) return 32 * GIB;
    if (starts_with(name, "Ascend910B")) return 64 * GIB;
    if (starts_with(name, "Ascend910_93")) return 64 * GIB;   /* per die of an A3 (910C) */
    if (starts_with(name, "Ascend950DT")) return 144 * GIB;
    if (starts_with(name, "Ascend950")) return 128 * GIB;
    if (starts_with(name, "Ascend310P")) return 24 * GIB;
    return 32 * GIB;
}

static void load_soc(void) {
    const char *env = getenv("PYACLNN_STUB_SOC");
    const char *name = (env && env[0]) ? env : DEFAULT_SOC;
    strncpy(soc_name, name, sizeof soc_name - 1);
    if (starts_with(soc_name, "Ascend910B") || starts_with(soc_name, "Ascend910_93"))
        soc_family = PYACLNN_SOC_A2;
    else if (starts_with(soc_name, "Ascend950"))
        soc_family = PYACLNN_SOC_950;
    else
        soc_family = PYACLNN_SOC_OTHER;
    soc_hbm = hbm_of(soc_name);
}

ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void) {
    pthread_once(&soc_once, load_soc);
    return soc_name;
}

PYACLNN_STUB_API pyaclnn_soc_family pyaclnn_stub_soc_family(void) {
    pthread_once(&soc_once, load_soc);
    return soc_family;
}

uint64_t rt_soc_hbm_bytes(void) {
    pthread_once(&soc_once, load_soc);
    return soc_hbm;
}
