/*
 * GroupedDynamicMxQuant: the kernel that runs on the stream (spec §3-§4).
 *
 * Work items are (32-row block, column tile) pairs, the emulator's counterpart of the NPU's
 * (group, 64-row chunk, 128-column tile) units: each reads its block's rows of x twice (once for
 * the per-column maximum, once to quantise) and writes its own y bytes and mxscale entries, so
 * the items run on any number of threads with identical results. Bytes no item covers (y rows
 * after the last group end, mxscale rows of empty groups and gap rows) are never touched.
 *
 * Views: x, groupIndex and FP8 y may have any strides (the vendor's Contiguous / ViewCopy steps
 * make that transparent on the NPU); FP4 y and mxscale are contiguous (phase 1 refused others).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gmq_kernel.h"
#include "gmq_rows.h"
#include "op_common.h"

/* ---- memory checks -------------------------------------------------------------------------- */

/* 1 if every element of the view lies in one device allocation. `bits` per element (4 for FP4,
 * whose offsets and strides count nibbles). Reports the fault on the stream otherwise. */
static int view_in_device_memory(const pyaclnn_stub_tensor *t, const char *name, int bits) {
    if (op_view_in_device_memory(t, bits)) return 1;   /* overflow-checked; refuses misaligned data */
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION,
                           "%s: %s (data %p, view offset %lld) is not in device memory or misaligned (tensor "
                           "data address unset, freed, too small, or not a multiple of the element size)",
                           GMQ_OP_NAME, name, t->data, (long long)t->offset);
    return 0;
}

/* ---- one work item --------------------------------------------------------------------------- */

typedef struct {
    const gmq_params *p;
    const gmq_block *blocks;
    size_t tiles;                 /* column tiles per block                       */
    int64_t n;
    gmq_row_fn encode;
    int fp4;
    /* x: element (r, c) at x + x_off + r * x_s0 + c * x_s1 (in uint16) */
    const uint16_t *x;
    int64_t x_off, x_s0, x_s1;
    /* y: FP8 element (r, c) at byte y_off + r * y_s0 + c * y_s1; FP4 nibble y_off + r * y_s0 + c */
    uint8_t *y;
    int64_t y_off, y_s0, y_s1;
    uint8_t *mxscale;             /* [R, n, 2], contiguous, offset applied          */
    _Atomic int out_of_memory;    /* a thread could not get its scratch memory       */
} gmq_job;

/* FP4 output whose first element sits in a high nibble (odd view offset): write nibble by nibble,
 * keeping the neighbours. */
static void store_fp4_unaligned(uint8_t *y, int64_t nibble, const uint8_t *packed, size_t w) {
    for (size_t j = 0; j < w; j++, nibble++) {
        uint8_t code = (uint8_t)((packed[j / 2] >> (4 * (j % 2))) & 0xFu);
        uint8_t *byte = y + nibble / 2;
        *byte = (nibble % 2) ? (uint8_t)((*byte & 0x0Fu) | (code << 4)) : (uint8_t)((*byte & 0xF0u) | code);
    }
}

/* Per-thread scratch of a work item. */
typedef struct {
    uint16_t xm[GMQ_TILE_COLS];
    uint8_t scale[GMQ_TILE_COLS], out[GMQ_TILE_COLS];
    float recip[GMQ_TILE_COLS];
    uint16_t gathered[GMQ_BLOCK_ROWS][GMQ_TILE_COLS];   /* strided x only */
} gmq_scratch;

/* The row of x where element (r, c) starts (unit column stride). */
static const uint16_t *x_row(const gmq_job *job, int64_t r, int64_t c) {
    return job->x + job->x_off + r * job->x_s0 + c;
}

/* Asks for the 64-byte lines of x[0, w) to be brought into L2. */
static void prefetch_row(const uint16_t *x, size_t w) {
    for (size_t j = 0; j < w; j += 32) __builtin_prefetch(x + j, 0, 2);
}

/* One work item: block b, columns [c0, c0 + w). `next` (or NULL) is the block of the thread's next
 * item, starting at column next_c0: its rows are prefetched while this one is quantised. */
static void run_item(const gmq_job *job, gmq_scratch *sc, const gmq_block *b, int64_t c0, size_t w,
                     const gmq_block *next, int64_t next_c0) {
    const uint16_t *rows[GMQ_BLOCK_ROWS];
    uint16_t *xm = sc->xm;
    uint8_t *scale = sc->scale, *out = sc->out;

    int unit_x = job->x_s1 == 1 || job->n == 1;
    for (int i = 0; i < b->rows; i++) {
        if (unit_x) {
            rows[i] = x_row(job, b->row + i, c0);
        } else {
            const uint16_t *src = x_row(job, b->row + i, 0);
            for (size_t j = 0; j < w; j++) sc->gathered[i][j] = src[(c0 + (int64_t)j) * job->x_s1];
            rows[i] = sc->gathered[i];
        }
    }

    gmq_rows_absmax(rows, b->rows, w, xm);
    gmq_column_scales(job->p, xm, w, scale, sc->recip);

    uint8_t *s = job->mxscale + (b->scale_row * job->n + c0) * 2;
    for (size_t j = 0; j < w; j++) s[2 * j + b->slot] = scale[j];
    if (b->pad)
        for (size_t j = 0; j < w; j++) s[2 * j + 1] = 0;

    for (int i = 0; i < b->rows; i++) {
        int64_t r = b->row + i;
        if (unit_x && next != NULL && i < next->rows) prefetch_row(x_row(job, next->row + i, next_c0), w);
        if (job->fp4) {
            int64_t nibble = job->y_off + r * job->y_s0 + c0;
            if (nibble % 2 == 0) {
                job->encode(rows[i], sc->recip, job->y + nibble / 2, w);
            } else {
                job->encode(rows[i], sc->recip, out, w);
                store_fp4_unaligned(job->y, nibble, out, w);
            }
        } else if (job->y_s1 == 1 || job->n == 1) {
            job->encode(rows[i], sc->recip, job->y + job->y_off + r * job->y_s0 + c0, w);
        } else {
            job->encode(rows[i], sc->recip, out, w);
            uint8_t *dst = job->y + job->y_off + r * job->y_s0;
            for (size_t j = 0; j < w; j++) dst[(c0 + (int64_t)j) * job->y_s1] = out[j];
        }
    }
}

static void run_items(void *ctx, size_t begin, size_t end) {
    gmq_job *job = ctx;
    gmq_scratch *sc = malloc(sizeof *sc);
    if (sc == NULL) {
        atomic_store(&job->out_of_memory, 1);
        return;
    }
    for (size_t item = begin; item < end; item++) {
        int64_t c0 = (int64_t)(item % job->tiles) * GMQ_TILE_COLS;
        size_t w = (size_t)(job->n - c0 < GMQ_TILE_COLS ? job->n - c0 : GMQ_TILE_COLS);
        const gmq_block *next = item + 1 < end ? &job->blocks[(item + 1) / job->tiles] : NULL;
        int64_t next_c0 = (int64_t)((item + 1) % job->tiles) * GMQ_TILE_COLS;
        run_item(job, sc, &job->blocks[item / job->tiles], c0, w, next, next_c0);
    }
    free(sc);
}

/* ---- the launch -------------------------------------------------------------------------------- */

/* groupIndex values (INT32, any stride) as int64; NULL when out of memory (fault reported). */
static int64_t *read_group_ends(const pyaclnn_stub_tensor *gi) {
    size_t g = (size_t)gi->shape[0];
    int64_t *ends = malloc(g * sizeof *ends);
    if (ends == NULL) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory for %zu groups",
                               GMQ_OP_NAME, g);
        return NULL;
    }
    const int32_t *values = (const int32_t *)gi->data + gi->offset;
    for (size_t k = 0; k < g; k++) ends[k] = values[(int64_t)k * gi->strides[0]];
    return ends;
}

void gmq_kernel(const pyaclnn_stub_launch *launch) {
    const gmq_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[GMQ_IN_X], *gi = &launch->inputs[GMQ_IN_GROUP_INDEX];
    const pyaclnn_stub_tensor *y = &launch->outputs[GMQ_OUT_Y], *ms = &launch->outputs[GMQ_OUT_MXSCALE];
    int fp4 = p->y_dtype == ACL_FLOAT4_E2M1 || p->y_dtype == ACL_FLOAT4_E1M2;
    if (!view_in_device_memory(x, "x", 16) || !view_in_device_memory(gi, "groupIndex", 32) ||
        !view_in_device_memory(y, "y", fp4 ? 4 : 8) || !view_in_device_memory(ms, "mxscale", 8))
        return;   /* fault recorded; nothing written */

    int64_t m = x->shape[0], n = x->shape[1];
    int64_t *ends = read_group_ends(gi);
    if (ends == NULL) return;
    gmq_plan plan;
    int built = gmq_plan_build(&plan, ends, (size_t)gi->shape[0], m);
    free(ends);
    if (built != 0) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory for the block plan",
                               GMQ_OP_NAME);
        return;
    }

    gmq_job job = {
        .p = p, .blocks = plan.blocks, .tiles = (size_t)((n + GMQ_TILE_COLS - 1) / GMQ_TILE_COLS), .n = n,
        .encode = gmq_row_encoder(p), .fp4 = fp4,
        .x = x->data, .x_off = x->offset, .x_s0 = x->strides[0], .x_s1 = x->strides[1],
        .y = y->data, .y_off = y->offset, .y_s0 = y->strides[0], .y_s1 = y->strides[1],
        .mxscale = (uint8_t *)ms->data + ms->offset,
    };
    size_t items = plan.count * job.tiles;
    gmq_parallel_for(items, gmq_thread_count(m * n), run_items, &job);
    if (atomic_load(&job.out_of_memory))
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                               "%s: out of host memory for the kernel's scratch buffers; outputs are incomplete",
                               GMQ_OP_NAME);

    if (plan.invalid)
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION,
                               "%s: invalid groupIndex (it must be non-decreasing group ends within [0, m = %lld]): "
                               "%s. The NPU reads and writes out of bounds or races on such input; the emulator "
                               "clamped each end to [previous end, m] and wrote those results",
                               GMQ_OP_NAME, (long long)m, plan.notes);
    gmq_plan_free(&plan);
}
