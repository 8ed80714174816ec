/*
 * GroupedDynamicMxQuant: groups -> 32-row blocks -> mxscale positions (spec §3.1-§3.3).
 *
 * groupIndex holds cumulative group ends: group g is rows [end_{g-1}, end_g), end_{-1} = 0.
 * Blocks are counted from each group's own start; blocks 2c and 2c+1 of a group share mxscale row
 * start_g / 64 + g + c (slots 0 and 1), and a group with an odd block count writes 0 into slot 1
 * of its last row. The blocks of one mxscale row form a chunk, the kernel's unit of work.
 *
 * Invalid groupIndex values (never validated on the host, spec §3.5) are clamped:
 *     end'_g = min(max(groupIndex[g], end'_{g-1}), m),   end'_{-1} = 0
 * so decreasing or negative entries make empty groups and entries beyond m stop at m. Groups then
 * never overlap and every write stays inside y and mxscale (with 0 <= s <= e <= m,
 * s / 64 + ceil((e - s) / 64) <= m / 64 + 1, so group g's last row is <= m / 64 + g). On the NPU
 * these inputs read and write out of bounds or race (G1 kernels assert on them), so the kernel
 * also reports them as a device error (gmq_kernel.c). groupIndex[-1] < m is valid: the rows after
 * it are not processed, as on the NPU.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmq_kernel.h"

/* Appends "; <text>" to plan->notes; a note that does not fit ends the text with "...". */
static void add_note(gmq_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(gmq_plan *plan, const char *fmt, ...) {
    size_t size = sizeof plan->notes, used = strlen(plan->notes);
    if (used + 4 >= size) return;                   /* full: already ends with "..." */
    if (used > 0) {
        strcpy(plan->notes + used, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(plan->notes + used, size - used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - used) strcpy(plan->notes + size - 4, "...");
}

static void note_violations(gmq_plan *plan, const int64_t *group_end, size_t group_count, int64_t m) {
    int64_t prev = 0;
    for (size_t g = 0; g < group_count; g++) {
        int64_t end = group_end[g];
        if (end < 0) {
            add_note(plan, "groupIndex[%zu] = %lld is negative", g, (long long)end);
            plan->invalid = 1;
        } else if (end > m) {
            add_note(plan, "groupIndex[%zu] = %lld exceeds m = %lld", g, (long long)end, (long long)m);
            plan->invalid = 1;
        }
        if (end < prev) {
            add_note(plan, "groupIndex[%zu] = %lld is below groupIndex[%zu] = %lld", g, (long long)end, g - 1,
                     (long long)prev);
            plan->invalid = 1;
        }
        prev = end;
    }
}

int gmq_plan_build(gmq_plan *plan, const int64_t *group_end, size_t group_count, int64_t m) {
    memset(plan, 0, sizeof *plan);
    note_violations(plan, group_end, group_count, m);

    /* Clamped ends are non-decreasing in [0, m], so there are at most m/32 + groups blocks. */
    size_t capacity = (size_t)(m / GMQ_BLOCK_ROWS) + group_count + 1;
    plan->blocks = malloc(capacity * sizeof *plan->blocks);
    plan->chunks = malloc(capacity * sizeof *plan->chunks);
    if (plan->blocks == NULL || plan->chunks == NULL) {
        gmq_plan_free(plan);
        return -1;
    }

    int64_t start = 0;
    for (size_t g = 0; g < group_count; g++) {
        int64_t end = group_end[g] < start ? start : group_end[g];
        if (end > m) end = m;
        int64_t length = end - start;
        int64_t nblocks = (length + GMQ_BLOCK_ROWS - 1) / GMQ_BLOCK_ROWS;
        for (int64_t k = 0; k < nblocks; k++) {
            int64_t row = start + k * GMQ_BLOCK_ROWS;
            gmq_block *b = &plan->blocks[plan->count++];
            b->row = row;
            b->rows = (int32_t)(end - row < GMQ_BLOCK_ROWS ? end - row : GMQ_BLOCK_ROWS);
            b->scale_row = start / GMQ_CHUNK_ROWS + (int64_t)g + k / 2;
            b->slot = (uint8_t)(k % 2);
            b->pad = (uint8_t)(k % 2 == 0 && k == nblocks - 1);
            if (b->slot == 0) plan->chunks[plan->chunk_count++] = plan->count - 1;
        }
        start = end;
    }
    return 0;
}

void gmq_plan_free(gmq_plan *plan) {
    free(plan->blocks);
    free(plan->chunks);
    plan->blocks = NULL;
    plan->chunks = NULL;
    plan->count = plan->chunk_count = 0;
}
