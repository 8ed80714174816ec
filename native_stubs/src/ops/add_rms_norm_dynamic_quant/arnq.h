/*
 * AddRmsNormDynamicQuant (V1 and V2): what the private arnq_*.c files share.
 *
 * Behaviour: /work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md section B (with its
 * corrections box, the section C defaults and appendix D), checked against hicann/ops-nn
 * norm/add_rms_norm_dynamic_quant (e5c3fa9327ea).
 *
 * Layers, as in the vendor code:
 *   add_rms_norm_dynamic_quant.toml  the two op_api GetWorkspaceSize functions as definitions (V1 and V2:
 *                    the vendor's checks in order, as steps)
 *   arnq_api.c       the op_api steps (V1's and V2's own, and the early return on empty tensors)
 *   arnq_l0.c        the shared L0 op as steps: the emulator options, kernel selection + tiling checks,
 *                    template, workspace, executor
 *   arnq_check.c     those kernel-selection / tiling checks, per SoC family
 *   arnq_tiling.c    template selection (B.8.1, B.9.1, appendix D) and workspace size
 *   arnq_kernel.c    the kernel: memory checks, parameters, rows spread over threads
 *   arnq_row.c       the per-row pipeline (arnq_row.h), arnq_store.c its row loads / stores
 *   arnq_loops.c     its element loops (vectorised), arnq_avx2.c the hot ones on AVX2
 *   arnq_stream.c    streaming stores for outputs bigger than the cache
 *   arnq_view.c      tensors as rows x columns, any strides; device-memory checks
 *   arnq_reduce.c    sum-of-squares reduction trees and rstd variants (B.8.2, B.9.2)
 *   arnq_options.c   PYACLNN_STUB_ARNQ_* switches for the open hardware questions (section C)
 *
 * The steps keep what they learn about the call (active outputs, the L0 y dtype, the options) in the
 * kernel's parameter block (arnq_params, op_params), which arnq_l0 completes.
 */
#ifndef PYACLNN_ARNQ_H
#define PYACLNN_ARNQ_H

#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "pyaclnn_stub.h"

#define ARNQ_OP_NAME "AddRmsNormDynamicQuant"

/* Parameter slots: the L0 op's inputs, then its outputs (the executor keeps the same order: the definitions'
 * inputs / outputs). */
enum { ARNQ_X1, ARNQ_X2, ARNQ_GAMMA, ARNQ_SMOOTH1, ARNQ_SMOOTH2, ARNQ_BETA, ARNQ_N_INPUTS };
enum { ARNQ_Y1, ARNQ_Y2, ARNQ_XOUT, ARNQ_SCALE1, ARNQ_SCALE2, ARNQ_N_OUTPUTS };
#define ARNQ_N_TENSORS (ARNQ_N_INPUTS + ARNQ_N_OUTPUTS)
#define ARNQ_OUT(k) (ARNQ_N_INPUTS + (k)) /* slot of output k in arnq_call.t */

/* Kernel templates. A2 = Atlas A2/A3 tiling keys 1/2/3; 950 = arch35 modes 0..4. */
typedef enum {
    ARNQ_A2_NORMAL,
    ARNQ_A2_SINGLE_ROW,
    ARNQ_A2_SLICE_D,
    ARNQ_950_PERF,
    ARNQ_950_NORMAL,
    ARNQ_950_SINGLE_ROW,
    ARNQ_950_SPLIT,
    ARNQ_950_REDUCE_EMPTY,
} arnq_template;

const char *arnq_template_name(arnq_template t);

/* ---- options (section C) -------------------------------------------------------------------- */

enum { ARNQ_RSTD_FLOAT, ARNQ_RSTD_FMA, ARNQ_RSTD_DOUBLE };
enum { ARNQ_FP8_NAN_ZERO, ARNQ_FP8_NAN_POSITIVE, ARNQ_FP8_NAN_KEEP_SIGN };
enum { ARNQ_STREAM_AUTO, ARNQ_STREAM_ALWAYS, ARNQ_STREAM_NEVER };

typedef struct {
    int reject_in_phase1;    /* Q8: tiling rejections as phase-1 561002 (default: phase-2 561103) */
    int tree_halves;         /* Q2: 64-lane reduce adds lane l + lane l+w/2 (default: adjacent pairs) */
    int scalar_rstd;         /* Q4: ARNQ_RSTD_FLOAT (default) / _FMA / _DOUBLE                     */
    int mula_unfused;        /* Q5: 950 Newton-Raphson MULA rounds the product first (default fused) */
    int max_nan_ignore;      /* Q7: vector max skips NaN (default: NaN propagates)                 */
    int fp8_nan;             /* Q11: ARNQ_FP8_NAN_ZERO (default, 0x00) / _POSITIVE / _KEEP_SIGN    */
    int hif8_nan_code;       /* Q11: HiF8 NaN -> 0x80 (default: 0x00)                              */
    int xout_saturate;       /* Q3: xOut narrowing clamps to max, NaN -> 0 (default: INF/NaN mode) */
    int64_t ub_950;          /* Q10: unified-buffer bytes the 950 template choice assumes          */
    int threads;             /* host threads for the rows; 0 = automatic                          */
    int stream;              /* ARNQ_STREAM_*: streaming stores for the outputs (results unchanged) */
    int isa_generic;         /* portable loops only, no AVX2 (results unchanged)                  */
} arnq_options;

/* Reads the PYACLNN_STUB_ARNQ_* variables. Returns 0, or -1 after writing what is wrong to `why`. */
int arnq_options_read(arnq_options *opt, char *why, size_t why_size);

/* ---- one call, as the op_api layer hands it to the L0 op's checks ------------------------------ */

typedef struct {
    pyaclnn_stub_tensor t[ARNQ_N_TENSORS];    /* snapshots (present = 0 for NULL)              */
    double epsilon;
    int has_mask;                             /* V2 outputMask given (always 2 elements here)  */
    int out1, out2;                           /* active outputs (B.2)                          */
    aclDataType dst;                          /* the L0 y dtype (INT32 user outputs -> INT4)   */
    int y_int32;                              /* V2 INT32 outputs: packed INT4 words           */
    arnq_options opt;
} arnq_call;

/* What the kernel needs, copied into the executor at phase 1. */
typedef struct {
    pyaclnn_soc_family soc;
    arnq_template tmpl;
    aclDataType x_dtype;             /* FLOAT16 or BF16                                       */
    aclDataType y_dtype;             /* INT8, INT4, FLOAT8_E4M3FN, FLOAT8_E5M2, HIFLOAT8       */
    int y_int32;
    int out1, out2;
    int mask_given;                  /* V2 outputMask passed (changes the A2 slice-D workspace) */
    int has_smooth1, has_smooth2, has_beta;
    int64_t m, n;                    /* rows, columns                                         */
    float eps, avg;                  /* (float)epsilon; float 1/N                             */
    int64_t slice_len;               /* A2 slice-D column slice                               */
    int64_t split_chunk, split_loop; /* 950 split: P0 and L                                   */
    arnq_options opt;
} arnq_params;

/* Helpers of the steps (arnq_api.c). */
struct op_call;
/* The call's kernel parameter block (op_params), where the steps leave what they learn; the first asks for it. */
arnq_params *arnq_block(struct op_call *c);
int arnq_same_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b);
int arnq_is_empty(const pyaclnn_stub_tensor *t);      /* present and numel == 0 */
int64_t arnq_last_dim(const pyaclnn_stub_tensor *t);  /* -1 for rank 0 */
const char *arnq_shape_str(const pyaclnn_stub_tensor *t, char *buf, size_t size);

/* ---- kernel-selection / tiling checks (arnq_check.c) ---------------------------------------- */

/* 0 if the L0 op accepts the call on this SoC family, else 1 with the broken rule in `why`. */
int arnq_check_a2(const arnq_call *call, char *why, size_t why_size);
int arnq_check_950(const arnq_call *call, char *why, size_t why_size);

/* ---- tiling (arnq_tiling.c) ------------------------------------------------------------------ */

arnq_template arnq_select_a2(int64_t n, int y_int4, int has_beta);
/* -1 if no 950 template fits (cannot happen for UB >= ~10 KiB). */
int arnq_select_950(int64_t n, int64_t m, int out1, int out2, int n_smooth, int has_beta, int64_t ub,
                    arnq_template *tmpl);
int64_t arnq_split_chunk(int out1, int out2, int n_smooth, int has_beta, int64_t ub);
int64_t arnq_split_loop(int64_t n, int64_t chunk);
int64_t arnq_a2_slice_len(int y_int4);
uint64_t arnq_workspace_size(const arnq_params *p);

/* ---- kernel (arnq_kernel.c) ------------------------------------------------------------------ */

void arnq_kernel(const pyaclnn_stub_launch *launch);

/* ---- reductions and rstd (arnq_reduce.c) ----------------------------------------------------- */

/* All take the squares q[0..n) of one row and may overwrite q; `halves` selects the Q2 order. */
float arnq_tree64(const float *v, int lanes, int halves);
float arnq_half_interval(float *q, int64_t n, int halves);                  /* A2, 950 single row */
float arnq_slice_d(float *q, int64_t n, int64_t slice, int halves);         /* A2 slice-D         */
float arnq_fold_reduce(float *q, int64_t n, int halves);                    /* 950 perf           */
/* The same from x itself (squares made on the way); avx2: arnq_avx2_available() said yes. */
float arnq_fold_reduce_x(const float *x, int64_t n, int halves, int avx2);
/* 950 normal: q must have room for ceil256(n) floats (the padding is zeroed here). */
float arnq_normal_reduce(float *q, int64_t n, int halves);
/* 950 split: `pad` must have room for `chunk` floats. */
float arnq_split_reduce(const float *q, int64_t n, int64_t chunk, int64_t loop, float *pad, int halves);

float arnq_scalar_rstd(float s, float avg, float eps, int mode);   /* `1 / sqrt(S*avg + eps)`   */
float arnq_vector_rstd(float s, float avg, float eps);             /* Muls, Adds, Sqrt, Div     */
float arnq_newton_rstd(float s, float avg, float eps, int unfused);/* 950 perf                  */

#endif
