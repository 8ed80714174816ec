/*
 * What the AddRmsNormDynamicQuant kernel's files share: one launch (arnq_kernel.c sets it up), the
 * per-thread worker with its row buffers, the row pipeline (arnq_row.c) and the stores of one row
 * (arnq_store.c).
 *
 * Each thread takes a run of rows. A row goes through three passes over its columns:
 *   1. x = f32(x1) + f32(x2) into a row buffer, xOut = x narrowed (and the squares, when the
 *      template's reduction wants them stored);
 *   2. after the sum of squares and rstd: y = (x * rstd) * gamma (+ beta) into a row buffer, and
 *      max |z_k| of z_k = y * smooth_k per active output;
 *   3. the scales, then y_k = quantised z_k (z_k made again from y, or stored as a row first
 *      where the output needs it whole).
 * Pass 1 of row r + 1 runs together with pass 3 of row r, a block of columns at a time (one loop
 * on AVX2): pass 3 mostly waits for the divider, pass 1 for memory and the arithmetic units.
 */
#ifndef PYACLNN_ARNQ_ROW_H
#define PYACLNN_ARNQ_ROW_H

#include <stdint.h>

#include "arnq.h"
#include "arnq_view.h"

/* Columns per step of the row passes: the block of x being narrowed to xOut, or of an output
 * row on its way to a streamed store, stays in L1 between the loops that touch it. */
#define ARNQ_BLOCK 512

typedef struct {
    const arnq_params *p;
    arnq_view x1, x2, xout, y[2], scale[2];
    const float *gamma, *smooth[2], *beta; /* widened once per launch; smooth NULL if absent */
    const float *ones;                     /* n ones: the smooth row of an output without one */
    const float *f16_table;                /* every fp16 code widened (fp16 inputs)          */
    int xout_mode;                         /* numerics mode of the xOut narrowing (Q3)        */
    int stream;                            /* dense outputs written with streaming stores     */
    int avx2;                              /* the AVX2 loops run (arnq_avx2.h)                */
} arnq_launch;

/* Pass 1 of a row, done a block at a time. */
typedef struct {
    int64_t r, j0;          /* the row, its next column to do (n: done)                */
    const uint16_t *a, *b;  /* its row of x1 and of x2 (gathered when strided)         */
    uint16_t *dst;          /* its xOut row                                            */
    float *x;               /* where its x goes                                        */
    int avx2;               /* arnq_avx2_step can do it (plain round to nearest)       */
} arnq_add_job;

typedef struct {
    const arnq_launch *c;
    int64_t r0, r1;           /* rows [r0, r1)                                              */
    float *x, *xn;            /* x of the row in passes 2-3, x of the next row (pass 1)      */
    float *y;                 /* y of the row (pass 2 makes it, pass 3 uses it)              */
    float *q, *qt;            /* squares (templates that store them), quotients of a row     */
    float *z[2], *pad;        /* rows z_k where needed whole; the split template's pad        */
    uint16_t *gathered;       /* the next row's x1 and x2 when strided (2n)                  */
    unsigned char *bytes;     /* an encoded row before a strided store                       */
    unsigned char *xstage;    /* one xOut block on its way to a streamed or strided store     */
    unsigned char *ystage;    /* one block of y1 and of y2 on its way to a streamed store     */
    uint32_t mbits[2];        /* max |z_k| as float bits (sign cleared)                      */
    arnq_add_job add;
} arnq_worker;

/* The rows [w->r0, w->r1) (one part of a launch, run by the worker pool; returns NULL). */
void *arnq_run_rows(void *worker);

/* ---- arnq_store.c ---- */

/* Row r of a u16 view: its address when dense, else gathered into tmp[0..n). */
const uint16_t *arnq_gather_u16(const arnq_view *v, int64_t r, int64_t n, uint16_t *tmp);

/* Encodes the quotients q[0..n) into y_k's row r (numerics library, any view). */
void arnq_store_y(arnq_worker *w, int k, int64_t r, const float *q);

void arnq_store_scale(const arnq_launch *c, int k, int64_t r, float scale);

#endif
