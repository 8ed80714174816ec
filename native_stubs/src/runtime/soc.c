/*
 * The emulated chip: its name (aclrtGetSocName), the family operators key their behaviour on
 * (pyaclnn_stub_soc_family) and its nominal device memory. PYACLNN_STUB_SOC picks the name
 * (default "Ascend950PR"); it is read once per process, like the real runtime caches the SoC
 * version it gets from the driver.
 *
 * Only the SoC names torch_npu recognises are accepted (its SocVersion table, plus the Ascend 950
 * names with an optional "_<digits>" variant suffix such as "Ascend950PR_9599"). Any other value is
 * a configuration mistake: aclInit, aclrtSetDevice and aclrtGetSocName then fail with
 * ACL_ERROR_RT_SOC_VERSION (507008, "soc version error" in rt_error_codes.h -- the code the real
 * runtime has for a chip version it cannot use) and leave a message listing the accepted names.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define DEFAULT_SOC "Ascend950PR"
#define GIB (1024ull * 1024ull * 1024ull)

static char soc_name[128];
static pyaclnn_soc_family soc_family;
static uint64_t soc_hbm;
static pthread_once_t soc_once = PTHREAD_ONCE_INIT;

static int soc_valid;

/* The accepted names, by family (what the message lists). */
static const char *const KNOWN_SOCS[] = {
    "Ascend950PR", "Ascend950DT",                                                  /* Ascend 950 */
    "Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910B4-1",
    "Ascend910_9391", "Ascend910_9392", "Ascend910_9381", "Ascend910_9382", "Ascend910_9372",
    "Ascend910_9362", "Ascend910B",                                               /* Atlas A2/A3 */
    "Ascend910PremiumA", "Ascend910ProA", "Ascend910A", "Ascend910ProB",
    "Ascend310P1", "Ascend310P2", "Ascend310P3", "Ascend310P4", "Ascend310P5", "Ascend310P7",
    "Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4",        /* no emulated operators */
};

static int is_known(const char *name) {
    for (size_t i = 0; i < sizeof KNOWN_SOCS / sizeof KNOWN_SOCS[0]; i++)
        if (strcmp(name, KNOWN_SOCS[i]) == 0) return 1;
    /* Ascend950PR_9599-style variants of the 950 names */
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(KNOWN_SOCS[i]);
        if (strncmp(name, KNOWN_SOCS[i], n) == 0 && name[n] == '_' && name[n + 1] != '\0' &&
            strspn(name + n + 1, "0123456789") == strlen(name + n + 1))
            return 1;
    }
    return 0;
}

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
    soc_valid = strlen(name) < sizeof soc_name && is_known(name);
    if (starts_with(soc_name, "Ascend910B") || starts_with(soc_name, "Ascend910_93"))
        soc_family = PYACLNN_SOC_A2;
    else if (starts_with(soc_name, "Ascend950"))
        soc_family = PYACLNN_SOC_950;
    else
        soc_family = PYACLNN_SOC_OTHER;
    soc_hbm = hbm_of(soc_name);
}

aclError rt_soc_check(const char *func) {
    pthread_once(&soc_once, load_soc);
    if (soc_valid) return ACL_SUCCESS;
    char names[640];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof KNOWN_SOCS / sizeof KNOWN_SOCS[0] && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", KNOWN_SOCS[i]);
    return RT_REPORT(ACL_ERROR_RT_SOC_VERSION, func,
                     "PYACLNN_STUB_SOC=\"%.64s\" is not a SoC the emulator knows; accepted names: %s "
                     "(Ascend950PR/Ascend950DT may carry a \"_<digits>\" suffix); unset it for the "
                     "default Ascend950PR",
                     soc_name, names);
}

ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void) {
    pthread_once(&soc_once, load_soc);
    if (rt_soc_check("aclrtGetSocName") != ACL_SUCCESS) return NULL;
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
