/*
 * aclnnAmpUpdateScale: dynamic loss-scale update (hicann/ops-math math/amp_update_scale); its definition is
 * amp_update_scale.toml. Behaviour as pinned down in
 * /work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md, section A (validation A.2: the steps
 * below, in the definition's order; arithmetic A.3: the kernel; workspace A.5: none).
 *
 * Option: PYACLNN_STUB_AMP_FP16_ROUNDING=rne|odd (read once per process, default rne) picks how the fp16
 * result is narrowed from fp32. The vendor's scalar float->half conversion is documented only as
 * round-to-odd, while the spec's default is round-to-nearest-even (open question Q12). It changes
 * results only when the fp32 product is not exactly representable in fp16.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define OP_NAME "AmpUpdateScale"
#define FP16_ROUNDING_ENV "PYACLNN_STUB_AMP_FP16_ROUNDING"

typedef struct {
    aclDataType dtype;          /* of currentScale / foundInf / updatedScale */
    float growth_factor;        /* (float)growthFactor, as the generated wrapper converts it */
    float backoff_factor;
    int32_t growth_interval;    /* range-checked in phase 1 */
    int fp16_mode;              /* numerics mode for the fp16 store: NUM_RINT or NUM_ODD */
} amp_params;

enum { IN_SCALE, IN_TRACKER, IN_FOUND_INF };   /* the executor's tensors (amp_update_scale.toml) */
enum { OUT_SCALE, OUT_TRACKER };

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

void amp_update_scale_kernel(const pyaclnn_stub_launch *launch) {
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

/* ---- phase 1: the family's steps ----------------------------------------------------------- */

/* amp_soc: A.2 row 2 starts with the kernel lookup, which knows only Atlas A2/A3 and Ascend 950 (561003). */
aclnnStatus opc_amp_soc(op_call *c, const op_step *s) {
    (void)s;
    if (pyaclnn_stub_soc_family() != PYACLNN_SOC_OTHER) return ACLNN_SUCCESS;
    const char *soc = aclrtGetSocName();
    pyaclnn_stub_report(ACLNN_ERR_INNER_FIND_KERNEL_ERROR, c->api,
                        "AmpUpdateScale has no kernel for SoC %s (supported: Atlas A2/A3 Ascend910B*, "
                        "Ascend910_93*, and Ascend950*)", soc ? soc : "(unknown)");
    return ACLNN_ERR_INNER_FIND_KERNEL_ERROR;
}

/* amp_dtypes currentScale foundInf updatedScale growthTracker updatedGrowthTracker: the kernels' (dtype, format)
 * tuples -- foundInf and updatedScale have currentScale's dtype, the growth trackers are INT32. */
aclnnStatus opc_amp_dtypes(op_call *c, const op_step *s) {
    aclDataType dt = op_tensor(c, s, 0)->dtype;
    for (int k = 1; k < s->np; k++) {
        aclDataType got = op_tensor(c, s, k)->dtype;
        if (got == (k < 3 ? dt : ACL_INT32)) continue;
        char b1[24], b2[24];
        if (k < 3)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s must equal the dtype of %s (%s)",
                                op_pname(c, s, k), op_dtype_name(got, b1), op_pname(c, s, 0), op_dtype_name(dt, b2));
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s must be INT32", op_pname(c, s, k),
                                op_dtype_name(got, b1));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* amp_nd t ...: every kernel is ND only. */
aclnnStatus opc_amp_nd(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        if (op_tensor(c, s, k)->format == ACL_FORMAT_ND) continue;
        char b[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s format %s is not supported (only ND)",
                            op_pname(c, s, k), op_format_name(op_tensor(c, s, k)->format, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static int parse_fp16_rounding(void) {
    const char *v = getenv(FP16_ROUNDING_ENV);
    if (v == NULL || *v == '\0' || strcmp(v, "rne") == 0) return NUM_RINT;
    return strcmp(v, "odd") == 0 ? NUM_ODD : -1;
}

/* The emulator option for the fp16 store, read once (runtime/switches.c); -1 (after reporting) for an
 * unknown value. */
static int fp16_rounding_mode(const char *api) {
    static op_switch rounding;
    int m = op_switch_value(&rounding, parse_fp16_rounding);
    if (m < 0) {   /* the error path only: read the value again for the message */
        const char *v = getenv(FP16_ROUNDING_ENV);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s=%s is not a known rounding: use 'rne' (default) or 'odd'",
                            FP16_ROUNDING_ENV, v ? v : "");
    }
    return m;
}

/* amp_plan currentScale growthFactor backoffFactor growthInterval: the kernel's attributes, as the generated
 * wrapper converts them (factors to float), and the fp16 rounding option (161002 for an unknown value). */
aclnnStatus opc_amp_plan(op_call *c, const op_step *s) {
    int fp16_mode = fp16_rounding_mode(c->api);
    if (fp16_mode < 0) return ACLNN_ERR_PARAM_INVALID;
    amp_params *prm = op_params(c, sizeof *prm);
    prm->dtype = op_tensor(c, s, 0)->dtype;
    prm->growth_factor = (float)op_argument(c, s, 1)->d;
    prm->backoff_factor = (float)op_argument(c, s, 2)->d;
    prm->growth_interval = c->nothing ? 0 : (int32_t)op_argument(c, s, 3)->i;
    prm->fp16_mode = fp16_mode;
    return ACLNN_SUCCESS;
}

/* amp_tiling growthInterval t ...: A.2 rows 3-5 (the tiling, skipped when nothing is launched): the interval's range,
 * then each t's storage shape ([] counts as [1]) must be exactly [1] (561002). */
aclnnStatus opc_amp_tiling(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    int64_t growthInterval = op_argument(c, s, 0)->i;
    if (growthInterval < 1 || growthInterval > INT32_MAX) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api,
                            "growthInterval %lld is out of range [1, 2147483647]", (long long)growthInterval);
        return ACLNN_ERR_INNER_TILING_ERROR;
    }
    for (int k = 1; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        int64_t rank = t->storage_ndim == 0 ? 1 : t->storage_ndim;
        int64_t count = t->storage_ndim == 0 ? 1 : t->storage_shape[0];
        if (rank != 1) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api,
                                "%s storage shape must be [1] (a scalar); it has rank %lld", op_pname(c, s, k),
                                (long long)rank);
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
        if (count != 1) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api,
                                "%s storage shape must be [1] (a scalar); it is [%lld]", op_pname(c, s, k),
                                (long long)count);
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
    }
    return ACLNN_SUCCESS;
}
