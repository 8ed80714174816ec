/*
 * GroupedDynamicMxQuant: the work items (spec §4). Item (64-row chunk, column tile c0..c0+w) reads
 * the rows of the chunk's one or two 32-row blocks twice - once for each block's per-column
 * maximum, once to quantise - and writes its own mxscale entries (both slots of the chunk's mxscale
 * row, so they are stored in one vectorised pass) and y bytes, so items run on any number of
 * threads with identical results.
 *
 * One range of items is one call of gmq_run_items, compiled at -O3 whatever the build type (a Debug
 * build would otherwise be ~20x slower and the test sweeps run through here) in AVX-512
 * (x86-64-v4), AVX2 and baseline versions picked once at load time; every loop (gmq_rows.h) is
 * inlined into it, so no call inside a range goes through a pointer. GCC's unroll-and-jam is off:
 * it turned the block-maximum loop back into scalar code.
 *
 * Memory: while a row is quantised, the same row of the next item is prefetched into L2 - its x
 * to read, so that the first pass of the next item finds it there, and its y to write, so that the
 * stores do not wait for the lines' read-for-ownership. (Non-temporal stores of y, which avoid
 * that read, measured 1-2 ms slower on [16384, 7168] bf16; so did prefetching two items ahead or
 * spreading a row's prefetches over its quantisation.)
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-loop-unroll-and-jam")
#endif

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gmq_kernel.h"
#include "gmq_rows.h"

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define GMQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
#endif
#ifndef GMQ_CLONES
#define GMQ_CLONES
#endif

/* What quantising one block of a tile needs: per column the E8M0 code, the reciprocal scale, and
 * the pow2 loop's offset (num_inl_pow2_column_*), usable when `pow2`. */
typedef struct {
    uint8_t scale[GMQ_TILE_COLS];
    float recip[GMQ_TILE_COLS];
    int16_t offset[GMQ_TILE_COLS];
    int pow2;
} gmq_block_state;

/* Per-thread scratch of a work item. */
typedef struct {
    uint16_t xm[GMQ_TILE_COLS];
    gmq_block_state block[2];                 /* slots 0 and 1 of the chunk             */
    uint8_t out[GMQ_TILE_COLS];               /* a row's bytes when they cannot go to y directly */
    uint16_t gathered[GMQ_CHUNK_ROWS][GMQ_TILE_COLS]; /* strided x only */
} gmq_scratch;

/* FP4 output whose first element sits in a high nibble (odd view offset): write nibble by nibble,
 * keeping the neighbours. */
GMQ_LOOP void store_fp4_unaligned(uint8_t *y, int64_t nibble, const uint8_t *packed, size_t w) {
    for (size_t j = 0; j < w; j++, nibble++) {
        uint8_t code = (uint8_t)((packed[j / 2] >> (4 * (j % 2))) & 0xFu);
        uint8_t *byte = y + nibble / 2;
        *byte = (nibble % 2) ? (uint8_t)((*byte & 0x0Fu) | (code << 4)) : (uint8_t)((*byte & 0xF0u) | code);
    }
}

/* The row of x where element (r, c) starts (unit column stride). */
GMQ_LOOP const uint16_t *x_row(const gmq_job *job, int64_t r, int64_t c) {
    return job->x + job->x_off + r * job->x_s0 + c;
}

/* Asks for the 64-byte lines of [p, p + bytes) to be brought into L2, to read or to write (a
 * PREFETCHW where the target has it, else a read prefetch: then the store finds the line in L2). */
GMQ_LOOP void prefetch_read(const void *p, size_t bytes) {
    for (size_t k = 0; k < bytes; k += 64) __builtin_prefetch((const char *)p + k, 0, 2);
}
GMQ_LOOP void prefetch_write(void *p, size_t bytes) {
    for (size_t k = 0; k < bytes; k += 64) __builtin_prefetch((char *)p + k, 1, 2);
}

/* Where row r's codes from column c0 on can be written directly: y itself for unit-stride rows
 * (FP4: starting on a whole byte); NULL when they go through the scratch row and store_row. */
GMQ_LOOP uint8_t *row_destination(const gmq_job *job, int fp4, int64_t r, int64_t c0) {
    if (fp4) {
        int64_t nibble = job->y_off + r * job->y_s0 + c0;
        return nibble % 2 == 0 ? job->y + nibble / 2 : NULL;
    }
    return job->y_s1 == 1 || job->n == 1 ? job->y + job->y_off + r * job->y_s0 + c0 : NULL;
}

/* Row r's codes for columns [c0, c0 + w), made in `out`, into y. */
GMQ_LOOP void store_row(const gmq_job *job, int fp4, int64_t r, int64_t c0, const uint8_t *out, size_t w) {
    if (fp4) {
        store_fp4_unaligned(job->y, job->y_off + r * job->y_s0 + c0, out, w);
    } else {
        uint8_t *dst = job->y + job->y_off + r * job->y_s0;
        for (size_t j = 0; j < w; j++) dst[(c0 + (int64_t)j) * job->y_s1] = out[j];
    }
}

#define GMQ_REDO_CHUNK 64 /* elements: a row the pow2 loop reports is tried again in pieces this wide */

/* One row of the tile into `out` (w FP8 bytes or w / 2 FP4 bytes), with its block's state: the
 * pow2 loop over the whole row when the tile allows it, else the exact loop. When the pow2 loop
 * reports FP8 codes it could not make exactly (a few rows in ten on normally distributed data), the
 * row is tried again in 64-element pieces and only the reported pieces take the exact loop. (One
 * call site per loop: each is inlined into every clone.) */
GMQ_LOOP void quantise_row(const gmq_job *job, const gmq_block_state *bs, gmq_encoding enc, const uint16_t *x,
                           uint8_t *out, size_t w) {
    if (job->p->x_dtype == ACL_FLOAT16) {
        gmq_row_exact_f16(enc, x, bs->recip, out, w);
        return;
    }
    int fp4 = enc != GMQ_ENC_E4M3FN && enc != GMQ_ENC_E5M2;
    int whole_row = bs->pow2;          /* the first pow2 attempt covers the row */
    size_t piece = bs->pow2 ? w : 0;   /* elements per pow2 attempt; 0: exact loop only */
    for (size_t j0 = 0; j0 < w;) {
        size_t n = piece == 0 || w - j0 < piece ? w - j0 : piece;
        uint8_t *dst = out + (fp4 ? j0 / 2 : j0);
        if (piece != 0 && gmq_row_pow2(enc, x + j0, bs->offset + j0, dst, n)) {
            j0 += n;
        } else if (whole_row) {
            whole_row = 0;             /* start again, piece by piece */
            piece = GMQ_REDO_CHUNK;
        } else {
            gmq_row_exact_bf16(enc, x + j0, bs->recip + j0, dst, n);
            j0 += n;
        }
    }
}

/* The blocks of chunk c: 1 or 2 (the chunk's first block has slot 0; a second one has slot 1). */
GMQ_LOOP int chunk_blocks(const gmq_job *job, size_t c) {
    size_t first = job->chunks[c];
    return first + 1 < job->block_count && job->blocks[first + 1].slot == 1 ? 2 : 1;
}

/* Rows of x of chunk c's tile starting at column c0: pointers into x, or gathered copies. Returns
 * the row count (up to 64: block 0's rows, then block 1's). */
GMQ_LOOP int chunk_rows(const gmq_job *job, gmq_scratch *sc, size_t c, int64_t c0, size_t w, const uint16_t **rows) {
    const gmq_block *b = &job->blocks[job->chunks[c]];
    int count = b->rows + (chunk_blocks(job, c) == 2 ? b[1].rows : 0);
    int unit_x = job->x_s1 == 1 || job->n == 1;
    for (int i = 0; i < count; i++) {
        if (unit_x) {
            rows[i] = x_row(job, b->row + i, c0); /* the chunk's rows are consecutive */
        } else {
            const uint16_t *src = x_row(job, b->row + i, 0);
            for (size_t j = 0; j < w; j++) sc->gathered[i][j] = src[(c0 + (int64_t)j) * job->x_s1];
            rows[i] = sc->gathered[i];
        }
    }
    return count;
}

/* One work item: chunk c, columns [c0, c0 + w). `next` (or SIZE_MAX) is the chunk of the thread's
 * next item, starting at column next_c0: its rows are prefetched while this one is quantised. */
GMQ_LOOP void run_item(const gmq_job *job, gmq_scratch *sc, size_t c, int64_t c0, size_t w, size_t next,
                       int64_t next_c0) {
    const gmq_params *p = job->p;
    const gmq_block *b = &job->blocks[job->chunks[c]];
    int nblocks = chunk_blocks(job, c);
    const uint16_t *rows[GMQ_CHUNK_ROWS];
    int nrows = chunk_rows(job, sc, c, c0, w, rows);
    gmq_encoding enc = gmq_encoding_of(p);
    int fp4 = p->y_dtype == ACL_FLOAT4_E2M1 || p->y_dtype == ACL_FLOAT4_E1M2;

    /* scales of each block; then the chunk's mxscale entries, both slots at once */
    for (int k = 0; k < nblocks; k++) {
        gmq_block_state *bs = &sc->block[k];
        gmq_absmax(rows + k * GMQ_BLOCK_ROWS, b[k].rows, w, sc->xm);
        gmq_column_scales(p, sc->xm, w, bs->scale, bs->recip);
        bs->pow2 = p->x_dtype == ACL_BF16 && gmq_pow2_columns(enc, bs->recip, sc->xm, w, bs->offset);
    }
    if (nblocks == 1) memset(sc->block[1].scale, 0, w); /* the pad slot */
    uint8_t *s = job->mxscale + (b->scale_row * job->n + c0) * 2;
    for (size_t j = 0; j < w; j++) {
        s[2 * j] = sc->block[0].scale[j];
        s[2 * j + 1] = sc->block[1].scale[j];
    }

    /* while row i is quantised, row i of the next item is asked into L2: x to read, y to write */
    int next_rows = 0, unit_x = job->x_s1 == 1 || job->n == 1;
    int64_t next_row = 0;
    if (next != SIZE_MAX) {
        const gmq_block *nb = &job->blocks[job->chunks[next]];
        next_rows = nb->rows + (chunk_blocks(job, next) == 2 ? nb[1].rows : 0);
        next_row = nb->row;
    }
    size_t bytes = fp4 ? w / 2 : w;
    for (int i = 0; i < nrows; i++) {
        int64_t r = b->row + i;
        if (i < next_rows) {
            if (unit_x) prefetch_read(x_row(job, next_row + i, next_c0), 2 * w);
            uint8_t *next_y = row_destination(job, fp4, next_row + i, next_c0);
            if (next_y != NULL) prefetch_write(next_y, bytes);
        }
        uint8_t *direct = row_destination(job, fp4, r, c0);
        quantise_row(job, &sc->block[i / GMQ_BLOCK_ROWS], enc, rows[i], direct != NULL ? direct : sc->out, w);
        if (direct == NULL) store_row(job, fp4, r, c0, sc->out, w);
    }
}

GMQ_CLONES static void run_items(gmq_job *job, gmq_scratch *sc, size_t begin, size_t end) {
    for (size_t item = begin; item < end; item++) {
        int64_t c0 = (int64_t)(item % job->tiles) * GMQ_TILE_COLS;
        size_t w = (size_t)(job->n - c0 < GMQ_TILE_COLS ? job->n - c0 : GMQ_TILE_COLS);
        size_t next = item + 1 < end ? (item + 1) / job->tiles : SIZE_MAX;
        int64_t next_c0 = (int64_t)((item + 1) % job->tiles) * GMQ_TILE_COLS;
        run_item(job, sc, item / job->tiles, c0, w, next, next_c0);
    }
}

/* A plain wrapper: GCC exports the ifunc of a non-static target_clones function whatever the
 * visibility, and this is internal. */
void gmq_run_items(void *ctx, size_t begin, size_t end) {
    gmq_job *job = ctx;
    gmq_scratch *sc = malloc(sizeof *sc);
    if (sc == NULL) {
        atomic_store(&job->out_of_memory, 1);
        return;
    }
    run_items(job, sc, begin, end);
    free(sc);
}
