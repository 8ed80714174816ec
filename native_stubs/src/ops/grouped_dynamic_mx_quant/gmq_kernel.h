/*
 * GroupedDynamicMxQuant: what phase 1 (grouped_dynamic_mx_quant.c) hands to the kernel
 * (gmq_kernel.c), and the kernel's internal pieces.
 */
#ifndef PYACLNN_GMQ_KERNEL_H
#define PYACLNN_GMQ_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "pyaclnn_stub.h"

#define GMQ_OP_NAME "GroupedDynamicMxQuant"
#define GMQ_BLOCK_ROWS 32
#define GMQ_CHUNK_ROWS 64
/* Columns per work item: the first pass reads the chunk's 64 rows of 1024 columns (128 KiB, from
 * L2, where the previous item prefetched them), the second finds them in L2 again. 256 and 512
 * measured the same on [16384, 7168] bf16; 2048 and whole rows were slower. */
#define GMQ_TILE_COLS 1024

/* Operator attributes after phase 1 (immutable). */
typedef struct {
    aclDataType x_dtype;       /* ACL_FLOAT16 or ACL_BF16                                       */
    aclDataType y_dtype;       /* ACL_FLOAT8_E5M2 / _E4M3FN / ACL_FLOAT4_E2M1 / _E1M2           */
    int scale_alg;             /* 0, 1, 2                                                        */
    int dtm_template;          /* scale_alg 2: 0 generic (T0), 1..3 dynamic-range templates     */
    float inv_dst_type_max;    /* scale_alg 1 and 2-T0: fl32(1 / dstTypeMax) or fl32(1 / Dmax) */
    int round_mode;            /* NUM_RINT / NUM_ROUND / NUM_FLOOR (numerics.h)                 */
} gmq_params;

enum { GMQ_IN_X, GMQ_IN_GROUP_INDEX, GMQ_N_INPUTS };
enum { GMQ_OUT_Y, GMQ_OUT_MXSCALE, GMQ_N_OUTPUTS };

/* The kernel (runs on the stream). */
void gmq_kernel(const pyaclnn_stub_launch *launch);

/* ---- block plan (gmq_plan.c) --------------------------------------------------------------- */

/* One 32-row block: rows [row, row + rows) of x, its mxscale entry [scale_row, :, slot]; `pad`
 * when the block is alone in its 64-row chunk (slot 1 of that chunk is then written as 0). */
typedef struct {
    int64_t row;
    int64_t scale_row;
    int32_t rows;
    uint8_t slot;
    uint8_t pad;
} gmq_block;

typedef struct {
    gmq_block *blocks;
    size_t count;
    /* The blocks that share one mxscale row (a 64-row chunk): chunk c is blocks[chunks[c]] (slot 0)
     * and, when it has slot 1, the block after it; alone, that block has `pad`. */
    size_t *chunks;
    size_t chunk_count;
    int invalid;        /* 1 if groupIndex broke the contract (negative, decreasing or > m)   */
    char notes[512];    /* the violations, for the error message                              */
} gmq_plan;

/* Blocks and chunks of every group, groupIndex clamped (see gmq_plan.c). Returns 0, or -1 when
 * out of memory. Free with gmq_plan_free. */
int gmq_plan_build(gmq_plan *plan, const int64_t *group_end, size_t group_count, int64_t m);
void gmq_plan_free(gmq_plan *plan);

/* ---- work items (gmq_tile.c) ------------------------------------------------------------------- */

/* What every work item reads; items are (64-row chunk, column tile) pairs, item = chunk * tiles +
 * tile, and each writes only its own bytes. */
typedef struct {
    const gmq_params *p;
    const gmq_block *blocks;
    size_t block_count;
    const size_t *chunks;         /* gmq_plan.chunks                                   */
    size_t tiles;                 /* column tiles per chunk                            */
    int64_t n;
    /* x: element (r, c) at x + x_off + r * x_s0 + c * x_s1 (in uint16) */
    const uint16_t *x;
    int64_t x_off, x_s0, x_s1;
    /* y: FP8 element (r, c) at byte y_off + r * y_s0 + c * y_s1; FP4 nibble y_off + r * y_s0 + c */
    uint8_t *y;
    int64_t y_off, y_s0, y_s1;
    uint8_t *mxscale;             /* [R, n, 2], contiguous, offset applied               */
    _Atomic int out_of_memory;    /* a thread could not get its scratch memory            */
} gmq_job;

/* Runs items [begin, end) of the gmq_job `job` (an op_range_fn of op_parallel.h). */
void gmq_run_items(void *job, size_t begin, size_t end);

#endif
