/* Shared by grouped_matmul.c (the op_api's checks, the float kernel) and grouped_matmul_quant.c (the A8W8 path). */
#ifndef PYACLNN_OPS_GROUPED_MATMUL_H
#define PYACLNN_OPS_GROUPED_MATMUL_H

#include <stdint.h>

#include "opbase/checks.h"
#include "opbase/opbase.h"

enum { GMM_NO_SPLIT = -1, GMM_SPLIT_M = 0, GMM_SPLIT_K = 2 };
enum { GMM_CASE_SEPARATED = 0, GMM_CASE_SINGLE_W3 = 1, GMM_CASE_SINGLE_X_WLIST = 2, GMM_CASE_XLIST_WLIST = 3, GMM_CASE_SPLIT_K = 4 };

typedef struct {
    /* tensors of each list, in the executor's inputs: x.., w.., bias.., scale.., perTokenScale.., [groupList] */
    int64_t nx, nw, nb, ns, npt, ny;
    int kase, has_group_list, group_list_type;
    int64_t groups;           /* groups of the split-M cases */
    int quant;                /* x and weight INT8 (A8W8) */
    int fp8;                  /* Ascend 950: x and weight FLOAT8 / HIFLOAT8, static quant (grouped_matmul_fp8.c) */
    int a8w8_950;             /* Ascend 950: x and weight INT8 (grouped_matmul_fp8.c's a8w8_950_kernel) */
    int nz, nz_tw;            /* the weights are FRACTAL_NZ storage (WeightNz entry), stored transposed */
    int s8s4;                 /* Ascend 950 S8S4 per-group (grouped_matmul_wq950.c): x INT8, packed INT4 NZ weight */
    int64_t s8s4_k, s8s4_n;   /* its weight's (k, n) as the op_api sees them (unpacked) */
    aclDataType y_dt, scale_dt, bias_dt;
} gmm_params;

/* A tensor list parameter: NULL, empty or one (0,) tensor is absent (ResetEmptyTensor); a NULL element is refused. */
typedef struct {
    const aclTensor *const *v;
    pyaclnn_stub_tensor *t;
    uint64_t n;
} gmm_list;

/* the quant parameter lists, in the op's order */
enum { GMM_Q_SCALE = 0, GMM_Q_OFFSET, GMM_Q_AQ_SCALE, GMM_Q_AQ_OFFSET, GMM_Q_PER_TOKEN, GMM_Q_N };

typedef struct {
    gmm_list X, W, B, Y, q[GMM_Q_N];
    const pyaclnn_stub_tensor *gl;   /* groupListOptional */
    int64_t gtype;
    int single_w;                    /* one weight tensor with groupType 0 / 2 (isSingleWeight) */
} gmm_lists;

/* the op_api's checks: 161002 */
#define gmm_bad(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* grouped_matmul.c: CheckGroupListCommonTensor's checks of a present group list (tensor) */
aclnnStatus gmm_group_list(op_call *c, const pyaclnn_stub_tensor *gl, int64_t groups, const char *against,
                           int group_type);
/* grouped_matmul.c: CheckOptionalTensorList (bias, scale): length, rank and N of each tensor against the weights */
aclnnStatus gmm_optional_list(op_call *c, const gmm_lists *L, const gmm_list *T, const char *name);

/* IsTransposeLastTwoDims: the last two dims' strides swapped (a transposed view of a contiguous matrix) */
int gmm_transposed(const pyaclnn_stub_tensor *t);

/* grouped_matmul_nz.c: 1 if the n weights' NZ storage (as many bytes as each view holds, from its offset) lies in
 * device memory, else 0 with the launch failed (reported); weight w's matrices untiled from that storage into
 * row-major (.., k, n) INT8 (NULL when out of memory) */
int gmm_nz_in_memory(const pyaclnn_stub_launch *launch, const pyaclnn_stub_tensor *w, int64_t n);
int8_t *gmm_nz_weight_load(const pyaclnn_stub_tensor *w, int stored_transposed);

/* grouped_matmul_quant.c */
aclnnStatus gmm_quant_function_params(op_call *c, const gmm_lists *L);   /* CheckFunctionParams, x and weight INT8 */
/* the emulator's limits, after the vendor's checks */
aclnnStatus gmm_quant_limits(op_call *c, const gmm_lists *L, int64_t act_type);
void gmm_quant_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl);
/* grouped_matmul_fp8.c: the 950's quant checker (1-byte x and weight, FP4 / INT4 / INT32-packed INT4 x) */
int gmm_950_quant(aclDataType xd, aclDataType wd);
aclnnStatus gmm_950_quant_params(op_call *c, const gmm_lists *L, int64_t act_type, int tx, int tw);
aclnnStatus gmm_fp8_limits(op_call *c, const gmm_lists *L);
void gmm_fp8_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl);
/* the 950's INT8 x INT8 with a UINT64 / INT64 scale and a FLOAT / FLOAT16 / BFLOAT16 bias: not modelled */
#define GMM_A8W8_950 "x and weight INT8 on the Ascend 950 with a UINT64 / INT64 scale and a float bias: the arch35 " \
    "vector epilogue (GQmmMixRegbaseKernel) reads the 64-bit word as a number; not modelled by the emulator"
/* grouped_matmul_wq950.c: the 950's weight-quant checker (x and weight of different sizes): its first checks, then a
 * refusal, except the S8S4 pseudo-quant path (all its checks: ACLNN_SUCCESS), whose executor gmm_950_s8s4_plan
 * builds (the per-group WeightNz kernel gmm_s8s4_kernel) */
int gmm_950_weight_quant(const op_call *c, aclDataType xd, aclDataType wd);
aclnnStatus gmm_950_weight_quant_params(op_call *c, const gmm_lists *L, int64_t act_type, int64_t split,
                                        int64_t gltype, int tx, int tw);
aclnnStatus gmm_950_s8s4_plan(op_call *c, const gmm_lists *L, int64_t gltype);
int64_t gmm_s8s4_c0(const pyaclnn_stub_tensor *w);
void gmm_s8s4_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl);

#endif
