/*
 * GroupedDynamicMxQuant: the kernel that runs on the stream (spec §3-§4).
 *
 * Work items are (64-row chunk, column tile) pairs, the emulator's counterpart of the NPU's
 * (group, 64-row chunk, 128-column tile) units (gmq_tile.c): each writes its own y bytes and
 * mxscale entries, so the items run on any number of threads with identical results. Bytes no
 * item covers (y rows after the last group end, mxscale rows of empty groups and gap rows) are
 * never touched.
 *
 * Views: x, groupIndex and FP8 y may have any strides (the vendor's Contiguous / ViewCopy steps
 * make that transparent on the NPU); FP4 y and mxscale are contiguous (phase 1 refused others).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "gmq_kernel.h"
#include "kernels/device.h"
#include "kernels/parallel.h"

/* Elements a thread should get at least: fewer, and waking a worker costs more than it saves. */
#define MIN_ELEMENTS_PER_THREAD (1 << 18)

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
        .p = p, .blocks = plan.blocks, .block_count = plan.count, .chunks = plan.chunks,
        .tiles = (size_t)((n + GMQ_TILE_COLS - 1) / GMQ_TILE_COLS), .n = n,
        .x = x->data, .x_off = x->offset, .x_s0 = x->strides[0], .x_s1 = x->strides[1],
        .y = y->data, .y_off = y->offset, .y_s0 = y->strides[0], .y_s1 = y->strides[1],
        .mxscale = (uint8_t *)ms->data + ms->offset,
    };
    size_t items = plan.chunk_count * job.tiles;
    op_parallel_for(items, op_thread_count((size_t)(m * n), MIN_ELEMENTS_PER_THREAD), gmq_run_items, &job);
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
