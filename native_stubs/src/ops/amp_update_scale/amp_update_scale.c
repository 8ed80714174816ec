/*
 * aclnnAmpUpdateScale: dynamic loss-scale update (hicann/ops-math math/amp_update_scale).
 * Behaviour as pinned down in /work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md,
 * section A (validation A.2, arithmetic A.3, workspace A.5).
 *
 * Option: PYACLNN_STUB_AMP_FP16_ROUNDING=rne|odd (read at phase 1, default rne) picks how the fp16
 * result is narrowed from fp32. The vendor's scalar float->half conversion is documented only as
 * round-to-odd, while the spec's default is round-to-nearest-even (open question Q12). It changes
 * results only when the fp32 product is not exactly representable in fp16.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opbase/checks.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "numerics.h"
#include "kernels/device.h"

#define OP_NAME "AmpUpdateScale"
#define FP16_ROUNDING_ENV "PYACLNN_STUB_AMP_FP16_ROUNDING"

typedef struct {
    aclDataType dtype;          /* of currentScale / foundInf / updatedScale */
    float growth_factor;        /* (float)growthFactor, as the generated wrapper converts it */
    float backoff_factor;
    int32_t growth_interval;    /* range-checked in phase 1 */
    int fp16_mode;              /* numerics mode for the fp16 store: NUM_RINT or NUM_ODD */
} amp_params;

enum { IN_SCALE, IN_TRACKER, IN_FOUND_INF, N_INPUTS };
enum { OUT_SCALE, OUT_TRACKER, N_OUTPUTS };

/* ---- kernel (runs on the stream) ------------------------------------------------------------ */

static float load_float(const void *p, aclDataType dtype) {
    uint16_t h;
    float f;
    switch (dtype) {
    case ACL_FLOAT16: memcpy(&h, p, 2); return num_f16_to_f32(h);
    case ACL_BF16: memcpy(&h, p, 2); return num_bf16_to_f32(h);
    default: memcpy(&f, p, 4); return f;
    }
}

static void store_float(void *p, aclDataType dtype, float v, int fp16_mode) {
    uint16_t h;
    switch (dtype) {
    case ACL_FLOAT16: h = num_f32_to_f16_mode(v, fp16_mode); memcpy(p, &h, 2); break;
    case ACL_BF16: h = num_f32_to_bf16(v); memcpy(p, &h, 2); break;   /* vector Cast, CAST_RINT */
    default: memcpy(p, &v, 4); break;
    }
}

static void amp_update_scale_kernel(const pyaclnn_stub_launch *launch) {
    const amp_params *prm = launch->params;
    size_t fsize = prm->dtype == ACL_FLOAT ? 4 : 2;
    const pyaclnn_stub_tensor *in = launch->inputs, *out = launch->outputs;
    void *scale_in = op_kernel_element(OP_NAME, "currentScale", &in[IN_SCALE], 0, fsize);
    void *tracker_in = scale_in ? op_kernel_element(OP_NAME, "growthTracker", &in[IN_TRACKER], 0, 4) : NULL;
    void *found_in = tracker_in ? op_kernel_element(OP_NAME, "foundInf", &in[IN_FOUND_INF], 0, fsize) : NULL;
    void *scale_out = found_in ? op_kernel_element(OP_NAME, "updatedScale", &out[OUT_SCALE], 0, fsize) : NULL;
    void *tracker_out = scale_out ? op_kernel_element(OP_NAME, "updatedGrowthTracker", &out[OUT_TRACKER], 0, 4)
                                  : NULL;
    if (tracker_out == NULL) return;   /* fault recorded; write nothing */

    /* Read everything before writing anything: torch_npu passes the inputs as the outputs. */
    float scale = load_float(scale_in, prm->dtype);
    float found_inf = load_float(found_in, prm->dtype);
    int32_t tracker;
    memcpy(&tracker, tracker_in, 4);

    if (found_inf != 0.0f) {          /* NaN counts as found, -0.0 does not */
        scale = scale * prm->backoff_factor;
        tracker = 0;
    } else {
        int32_t successful = (int32_t)((uint32_t)tracker + 1u);   /* wraps at INT32_MAX (spec note 5) */
        if (successful == prm->growth_interval) {
            float grown = scale * prm->growth_factor;
            if (isfinite(grown)) scale = grown;   /* tested in fp32, before narrowing */
            tracker = 0;
        } else {
            tracker = successful;
        }
    }
    store_float(scale_out, prm->dtype, scale, prm->fp16_mode);
    memcpy(tracker_out, &tracker, 4);
}

/* ---- phase 1 -------------------------------------------------------------------------------- */

static const char API[] = "aclnnAmpUpdateScaleGetWorkspaceSize";
static const char *const TENSOR_NAMES[] = {"currentScale", "growthTracker", "foundInf", "updatedScale",
                                           "updatedGrowthTracker"};

/* A.2 row 2: the (dtype, format) tuple must be one of the three kernels, all ND. */
static aclnnStatus check_kernel_match(const pyaclnn_stub_tensor t[5]) {
    char b1[24], b2[24];
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER) {
        const char *soc = aclrtGetSocName();
        pyaclnn_stub_report(ACLNN_ERR_INNER_FIND_KERNEL_ERROR, API,
                            "AmpUpdateScale has no kernel for SoC %s (supported: Atlas A2/A3 Ascend910B*, "
                            "Ascend910_93*, and Ascend950*)", soc ? soc : "(unknown)");
        return ACLNN_ERR_INNER_FIND_KERNEL_ERROR;
    }
    aclDataType dt = t[0].dtype;
    const char *rule = NULL;
    int bad = 0;
    if (dt != ACL_FLOAT && dt != ACL_FLOAT16 && dt != ACL_BF16) {
        rule = "currentScale dtype %s is not supported (FLOAT, FLOAT16 or BFLOAT16)";
    } else if (t[2].dtype != dt) {
        bad = 2, rule = "foundInf dtype %s must equal the dtype of currentScale (%s)";
    } else if (t[3].dtype != dt) {
        bad = 3, rule = "updatedScale dtype %s must equal the dtype of currentScale (%s)";
    } else if (t[1].dtype != ACL_INT32) {
        bad = 1, rule = "growthTracker dtype %s must be INT32";
    } else if (t[4].dtype != ACL_INT32) {
        bad = 4, rule = "updatedGrowthTracker dtype %s must be INT32";
    }
    if (rule) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, rule, op_dtype_name(t[bad].dtype, b1),
                            op_dtype_name(dt, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (int i = 0; i < 5; i++) {
        if (t[i].format != ACL_FORMAT_ND) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "%s format %s is not supported (only ND)",
                                TENSOR_NAMES[i], op_format_name(t[i].format, b1));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

/* A.2 rows 3-5 (tiling): the interval range, then each input's storage shape ([] counts as [1])
 * must be exactly [1]. */
static aclnnStatus check_tiling(const pyaclnn_stub_tensor t[5], int64_t growthInterval) {
    if (growthInterval < 1 || growthInterval > INT32_MAX) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, API,
                            "growthInterval %lld is out of range [1, 2147483647]", (long long)growthInterval);
        return ACLNN_ERR_INNER_TILING_ERROR;
    }
    for (int i = 0; i < N_INPUTS; i++) {
        int64_t rank = t[i].storage_ndim == 0 ? 1 : t[i].storage_ndim;
        int64_t count = t[i].storage_ndim == 0 ? 1 : t[i].storage_shape[0];
        if (rank != 1) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, API,
                                "%s storage shape must be [1] (a scalar); it has rank %lld", TENSOR_NAMES[i],
                                (long long)rank);
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
        if (count != 1) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, API,
                                "%s storage shape must be [1] (a scalar); it is [%lld]", TENSOR_NAMES[i],
                                (long long)count);
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
    }
    return ACLNN_SUCCESS;
}

/* The emulator option for the fp16 store; -1 (after reporting) for an unknown value. */
static int fp16_rounding_mode(void) {
    const char *v = getenv(FP16_ROUNDING_ENV);
    if (v == NULL || *v == '\0' || strcmp(v, "rne") == 0) return NUM_RINT;
    if (strcmp(v, "odd") == 0) return NUM_ODD;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "%s=%s is not a known rounding: use 'rne' (default) or 'odd'",
                        FP16_ROUNDING_ENV, v);
    return -1;
}

aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(const aclTensor *currentScale, const aclTensor *growthTracker,
                                                const aclTensor *foundInf, double growthFactor, double backoffFactor,
                                                int64_t growthInterval, const aclTensor *updatedScaleOut,
                                                const aclTensor *updatedGrowthTrackerOut, uint64_t *workspaceSize,
                                                aclOpExecutor **executor) {
    const aclTensor *handles[5] = {currentScale, growthTracker, foundInf, updatedScaleOut, updatedGrowthTrackerOut};
    pyaclnn_stub_tensor t[5];

    /* Row 1: every pointer argument (the generated wrapper checks them all before anything else). */
    for (int i = 0; i < 5; i++) {
        if (handles[i] == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL", TENSOR_NAMES[i]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    if (workspaceSize == NULL || executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL", workspaceSize == NULL ? "workspaceSize"
                                                                                             : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    for (int i = 0; i < 5; i++) {
        aclnnStatus rc = op_tensor_arg(API, TENSOR_NAMES[i], handles[i], &t[i]);
        if (rc != ACLNN_SUCCESS) return rc;
    }

    aclnnStatus rc = check_kernel_match(t);
    if (rc != ACLNN_SUCCESS) return rc;

    int fp16_mode = fp16_rounding_mode();
    if (fp16_mode < 0) return ACLNN_ERR_PARAM_INVALID;

    /* nnopbase skips tiling and launch when every output is empty: success, nothing to run. */
    int all_outputs_empty = pyaclnn_stub_numel(&t[3]) == 0 && pyaclnn_stub_numel(&t[4]) == 0;
    if (!all_outputs_empty) {
        rc = check_tiling(t, growthInterval);
        if (rc != ACLNN_SUCCESS) return rc;
    }

    amp_params prm = {
        .dtype = t[0].dtype,
        .growth_factor = (float)growthFactor,
        .backoff_factor = (float)backoffFactor,
        .growth_interval = all_outputs_empty ? 0 : (int32_t)growthInterval,
        .fp16_mode = fp16_mode,
    };
    aclOpExecutor *e = pyaclnn_stub_executor_new(OP_NAME, all_outputs_empty ? NULL : amp_update_scale_kernel, &prm,
                                                 sizeof prm, handles, N_INPUTS, handles + N_INPUTS, N_OUTPUTS, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, API, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;   /* A.5: the tiling asks for no workspace */
    *executor = e;
    return ACLNN_SUCCESS;
}

/* ---- phase 2 -------------------------------------------------------------------------------- */

aclnnStatus aclnnAmpUpdateScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAmpUpdateScale", workspace, workspaceSize, executor, stream);
}
