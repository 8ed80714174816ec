/*
 * The matmul engine (aclnnMm, BatchMatMul, Matmul, Addmm): out = self @ mat2 with torch.matmul's shape
 * rules (1-D operands get a unit dim that is dropped again; batch dims broadcast), any strides.
 *
 * Accumulation (stated, class c): every operand is widened to fp32 (fp16/bf16 exactly), products and
 * sums are fp32 (in k order with the portable engine, below), and the fp32 result is rounded once (RNE) to
 * out's dtype. That is
 * the cube unit's data path (fp16/bf16 in, fp32 accumulator in L0C, cast on the way out); its order
 * of partial sums is not published, so results agree with an NPU to a tolerance, not bit for bit.
 * cubeMathType USE_FP16 (2) first rounds fp32 operands to fp16, as the vendor's op_api does;
 * ALLOW_FP32_DOWN_PRECISION (1) and USE_HF32 (3) let the NPU use HF32 for fp32 operands: the emulator
 * keeps fp32 (more precise than an NPU in that mode).
 *
 * Two engines compute the fp32 products (mm_f32; mm_engine_name() says which one a call uses):
 * - BLAS (the default when the build found scipy-openblas32, kernels/mm_blas.c): OpenBLAS's sgemm on the fp32
 *   copies, one OpenBLAS thread per call, the calls spread over the kernel pool. Same data path (fp32 products
 *   and sums, one rounding at the end); its order of partial sums and its FMAs are OpenBLAS's, chosen at run
 *   time for the CPU, so results differ from the portable loop within fp32 rounding (README "Matmul on the
 *   emulator" gives the measured error against float64).
 * - portable (PYACLNN_STUB_MATMUL=portable, or a build without OpenBLAS or a sanitizer build): the hand-written
 *   loop, sums in k order, bit-identical on every CPU; the op corpus is replayed with it.
 * Either way the rows are spread over threads (ops/common/op_parallel) and the thread count never changes a
 * result.
 */
#ifndef PYACLNN_MM_ENGINE_H
#define PYACLNN_MM_ENGINE_H

#include "kernels/view.h"

typedef struct {
    int64_t bshape[PYACLNN_STUB_MAX_DIMS];   /* broadcast batch shape                              */
    int bndim;
    int64_t m, k, n;
    int fp16_inputs;                         /* cubeMathType USE_FP16 with fp32 operands            */
    int cube_math_type;                      /* as passed (mm_result_dtype reads it)                */
    int has_bias;                            /* Addmm, Baddbmm: out = beta * inputs[2] + alpha * (a @ b) */
    float alpha, beta;
} mm_plan;

/* Phase 1: the plan for torch.matmul(self, mat2) shapes; 161002 if the k dims differ or the batch dims
 * do not broadcast. The expected out shape goes to shape/ndim. */
aclnnStatus mm_plan_make(const char *api, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b, mm_plan *p,
                         int64_t *shape, int64_t *ndim);

/* The engine's fp32 product on row-major host blocks: c[m, n] = a[m, k] @ b[k, n] (leading dimensions lda, ldb,
 * ldc in elements), each c element summed in fp32 in k order from 0 -- the accumulation mm_kernel uses. For
 * families that stage their operands themselves (attention's Q @ K^T and P @ V blocks). */
void mm_f32_block(const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, int64_t m,
                  int64_t k, int64_t n);

/* Kernel: outputs[0] = inputs[0] @ inputs[1] (Addmm, Baddbmm: inputs[2] is the bias, broadcast to [m, n], or a
 * 3-D one to [batch, m, n]). */
void mm_kernel(const pyaclnn_stub_launch *launch);

/* The engine's product on contiguous fp32 matrices (the cube unit's data path, as mm_kernel): for b in
 * [0, batch), C_b[m][n] = sum_k A_b[m][k] * B_b[k][n] with fp32 products and sums (OpenBLAS's sgemm, or the
 * portable loop's k order from 0); A_b = A + b * a_batch, B_b = B + b * b_batch (0: one matrix shared by every batch),
 * C_b = C + b * c_batch (rows of n floats, one after the other). The work is spread over the worker pool in units cut by the shape alone
 * (results never depend on the thread count). Convolutions use it after an im2col (ops/conv). */
void mm_f32(const float *A, int64_t a_batch, const float *B, int64_t b_batch, float *C, int64_t c_batch,
            int64_t batch, int64_t m, int64_t k, int64_t n);

/* The engine a product uses now: 1 for BLAS (loads OpenBLAS at the first call), 0 for the portable loop. */
int mm_blas_active(void);

/* c[m, n] = a[m, k] @ b[k, n] through OpenBLAS's sgemm (row-major, leading dimensions in elements), one thread;
 * 0 (nothing done) when OpenBLAS is not loaded or a size exceeds its 32-bit integers. */
int mm_blas_sgemm(const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, int64_t m,
                  int64_t k, int64_t n);

/* One line naming the engine in use (and why the portable one, when it is); `python -m pyaclnn info` prints it
 * through the exported pyaclnn_stub_matmul_engine(). */
const char *mm_engine_name(void);

/* cubeMathType values (aclnn_util.h of the matmul op_api). */
enum { MM_KEEP_DTYPE = 0, MM_ALLOW_FP32_DOWN_PRECISION = 1, MM_USE_FP16 = 2, MM_USE_HF32 = 3 };
/* Whether the cube computes in FLOAT16 (every operand rounded to fp16 first): the Atlas A2 / Ascend 950 rule's
 * promotion table (matmul_util.cpp, Dav2201MatMulRule::GetUpperDtypeByLookUpTable) gives FLOAT16 under USE_FP16 for
 * every pair of operand dtypes but BF16 + BF16 (kept BF16); the other modes give the wider dtype (FLOAT for a mix),
 * to which the engine's fp32 widening is exact. Mixed operands are the vendor's too: the rule does not ask for
 * equal dtypes. */
static inline int mm_rounds_to_fp16(aclDataType a, aclDataType b, int64_t cube_math_type) {
    return cube_math_type == MM_USE_FP16 && !(a == ACL_BF16 && b == ACL_BF16);
}

/* The dtype the cube writes its result in, before the cast to out's dtype (matmul_util.cpp): the promotion
 * table's dtype (FLOAT16 under USE_FP16 but for BF16 + BF16; else the two operands' dtype when both are FLOAT16 or
 * both BF16, FLOAT for every other pair), then NeedEnableFp32Output's FLOAT for a FLOAT out of two FLOAT16 or two
 * BF16 operands (Atlas A2 and the 950). Dav2201MatMulRule::UpdateOutputDtype's own A2 step (a FLOAT out kept
 * unless USE_FP16) changes nothing beyond that: without USE_FP16 the table's dtype is already FLOAT or a
 * same-dtype pair's. A result dtype narrower than FLOAT is a rounding of the fp32 accumulator that the cast to out
 * cannot undo: FLOAT operands under USE_FP16 into a FLOAT out are rounded to fp16, two BF16 operands into a FLOAT16
 * out to bf16 first. */
static inline aclDataType mm_result_dtype(aclDataType a, aclDataType b, aclDataType out, int cube_math_type) {
    int same_low = a == b && (a == ACL_FLOAT16 || a == ACL_BF16);
    if (out == ACL_FLOAT && same_low) return ACL_FLOAT;
    if (cube_math_type == MM_USE_FP16) return a == ACL_BF16 && b == ACL_BF16 ? ACL_BF16 : ACL_FLOAT16;
    return same_low ? a : ACL_FLOAT;
}

#endif
