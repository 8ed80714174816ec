/*
 * What quant_matmul.c (aclnnQuantMatmulV5 / WeightNz: the checks and the A8W8 / FLOAT8 / HIFLOAT8 kernels) and
 * quant_matmul_mx.c (the Ascend 950's MX mode) share: the kernel's parameter block, the batch walk, the MX steps.
 */
#ifndef PYACLNN_OPS_QUANT_QUANT_MATMUL_H
#define PYACLNN_OPS_QUANT_QUANT_MATMUL_H

#include <stdint.h>

#include "internal/pyaclnn_stub.h"
#include "opbase/checks.h"
#include "opbase/opbase.h"

#define QMM_MAX_BATCH 6

typedef struct {
    int64_t m, k, n;
    int64_t nb;                      /* out's batch dims (as inferred)                                       */
    int64_t bshape[QMM_MAX_BATCH];
    int64_t x1b[QMM_MAX_BATCH], x2b[QMM_MAX_BATCH];   /* x1 / x2 batch dims aligned right (1: broadcast)    */
    int trans1, trans2;
    int nz;                          /* x2 in FRACTAL_NZ: rows x cols is its stored ND matrix (after the swap) */
    int64_t nz_rows, nz_cols, nz_batch;
    int scale_u64, scale_n, pertoken, bias_kind, bias3d, has_offset, offset_n;
    int fin;                         /* x1, x2 FLOAT8 / HIFLOAT8 (Ascend 950): fp32 accumulation               */
    int s1_scalar;                   /* x1Scale [1] with FLOAT8 / HIFLOAT8: the double-scale mode                 */
    int dq;                          /* QMM_DQ_*: which dequant the vendor's tiling picks                        */
    aclDataType scale_dt, out_dt, bias_dt;
    int mx;                          /* MX (Ascend 950): FLOAT8 / FLOAT4 x, FLOAT8_E8M0 scales per 32 of K        */
    int s1_kmajor, s2_kmajor;        /* the scale's bytes as [ceil(K/64), rows, 2] (else [rows, ceil(K/64), 2])   */
    int s1_swap, s2_swap;            /* the scale view is read as its storage (MxScaleContiguousProcess, or       */
                                     /* TensorContiguousProcess for a 2-D per-block scale)                       */
    int pb;                          /* G-B / B-B (Ascend 950, FLOAT8 / HIFLOAT8): FLOAT scales per 128-block     */
    int64_t pb_gsm;                  /* groupSizeM of the per-block x1Scale: 1 (G-B) or 128 (B-B)                */
    int a4w4;                        /* x1, x2 INT32 holding eight INT4 each (Atlas A2, ConvertTensorToInt4)      */
    int a4_swap1, a4_swap2;          /* that view read as its storage, last two dims swapped (the flag flipped)  */
    int a8w4;                        /* x1 INT8, x2 INT32 holding eight INT4 (Atlas A2, quant_matmul_a8w4.c)     */
    int64_t a8w4_groups;             /* its K-groups: 1 (per-channel) or K / 256                                */
} qmm_params;

enum { QMM_BIAS_NONE = 0, QMM_BIAS_INT32 = 1, QMM_BIAS_FLOAT = 2 };
/* the dequant after the cube: the fixpipe with the UINT64 words, the fixpipe with one scale the kernel derives from
 * the two FLOAT scales (FLOAT8 / HIFLOAT8 double scale without a bias), the vector epilogue (AIV, fp32 steps) */
enum { QMM_DQ_FIXPIPE = 0, QMM_DQ_DOUBLE = 1, QMM_DQ_VECTOR = 2 };

/* Out's batch index b -> the x1 / x2 matrix indices it reads (their batch dims broadcast). */
static inline void qmm_batch_offsets(const qmm_params *p, int64_t b, int64_t *o1, int64_t *o2) {
    int64_t r = b, st1 = 1, st2 = 1;
    *o1 = *o2 = 0;
    for (int64_t i = p->nb - 1; i >= 0; i--) {
        int64_t idx = r % p->bshape[i];
        r /= p->bshape[i];
        *o1 += (p->x1b[i] == 1 ? 0 : idx) * st1;
        *o2 += (p->x2b[i] == 1 ? 0 : idx) * st2;
        st1 *= p->x1b[i];
        st2 *= p->x2b[i];
    }
}

/* ---- MX (quant_matmul_mx.c) ------------------------------------------------------------------------------------
 * The op_api's MX steps, each called at its place in qmm_check (x1 / x2 / x1Scale / x2Scale as the op_api sees them
 * after PreMatmulCalcProcess: t1 / t2 the transposes with transposed views folded in; s1 / s2 the scales as
 * MxScaleContiguousProcess re-describes them). */

/* OpCheckDtypeNotSupport / OpCheckDtypeNotMatch (quant_matmul.c) */
aclnnStatus qmm_dtype_not_support(op_call *c, const char *name, aclDataType dt, const aclDataType *list, int n);
aclnnStatus qmm_dtype_not_match(op_call *c, const char *name, aclDataType dt, aclDataType want);
/* IsTransposeLastTwoDims (matmul_util.cpp) */
int qmm_transposed_view(const pyaclnn_stub_tensor *t);
/* MxScaleContiguousProcess: the scale view with its dims -3 / -2 swapped when they are swapped in memory; 1 if so */
int qmm_mx_scale_view(const pyaclnn_stub_tensor *t, pyaclnn_stub_tensor *v);
/* QuantMatmulChecker::InferGroupSize (both scales of >= 2 dims): group the given or inferred groupSize */
aclnnStatus qmm_infer_group(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                            const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                            int64_t *group);
/* CheckMicroScaling: x1 / x2 dtypes, bias, out, x2Offset */
aclnnStatus qmm_mx_dtypes(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                          const pyaclnn_stub_tensor *x2o, const pyaclnn_stub_tensor *bias, aclDataType od);
/* CheckScaleDimRange (CheckMxScaleDimRange) and CheckGroupSize (CheckMxGroupSize) */
aclnnStatus qmm_mx_scale_dims(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                              const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int64_t group);
/* CheckDimValueMicroScaling (m, k, n: the problem's) */
aclnnStatus qmm_mx_dim_value(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                             const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                             int64_t m, int64_t k, int64_t n);
/* the arch35 tiling's MX scale checks (561002) and the emulator's read of the scales */
aclnnStatus qmm_mx_tiling(op_call *c, const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                          int64_t m, int64_t k, int64_t n);
void qmm_mx_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p);

/* ---- G-B / B-B (quant_matmul_perblock.c) ---- */
/* CheckPerblockGroupSize */
aclnnStatus qmm_pb_group_size(op_call *c, int64_t group);
/* CheckDimValuePerblock (with CheckGroupSizeShape) on the op_api's x1 / x2 / scales and transposes */
aclnnStatus qmm_pb_dim_value(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                             const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                             int64_t group);
void qmm_pb_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p);

/* ---- A8W4 on Atlas A2 (quant_matmul_a8w4.c) ---- */
/* An INT32 view holding eight INT4 each, lowest nibble first, as INT8 values (quant_matmul.c): the view (with `swap`,
 * its storage: the last two dims swapped back) row-major, each nibble sign-extended; the caller frees. */
int8_t *qmm_int4_unpack(const pyaclnn_stub_tensor *t, int swap);
/* PreMatmulCalcProcess's A8W4 INT checks on, after CheckInputExistence (qmm_check's operands) */
aclnnStatus qmm_a8w4_check(op_call *c, const op_step *s);
void qmm_a8w4_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p);

#endif
