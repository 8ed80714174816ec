/* Loads and stores of one row of the AddRmsNormDynamicQuant kernel, any view (see arnq_row.h). */
#include "arnq_opt.h" /* first: compile options */

#include <string.h>

#include "arnq_loops.h"
#include "arnq_row.h"
#include "numerics.h"

const uint16_t *arnq_gather_u16(const arnq_view *v, int64_t r, int64_t n, uint16_t *tmp) {
    const uint16_t *src = (const uint16_t *)arnq_view_at(v, arnq_view_row(v, r));
    if (v->col_stride == 1) return src;
    for (int64_t j = 0; j < n; j++) tmp[j] = src[j * v->col_stride];
    return tmp;
}

/* A row encoded densely in `out` (n elements) written into a strided view. */
static void scatter_y(const arnq_params *p, const arnq_view *v, int64_t row, const uint8_t *out) {
    int64_t n = p->n;
    if (v->kind == ARNQ_ELEM_NIBBLE) { /* INT4 view: one nibble at a time */
        for (int64_t j = 0; j < n; j++) {
            int64_t e = row + j * v->col_stride;
            uint8_t nib = (uint8_t)((out[j / 2] >> (4 * (j & 1))) & 0xF);
            uint8_t *b = v->data + e / 2;
            *b = (e & 1) ? (uint8_t)((*b & 0x0F) | (nib << 4)) : (uint8_t)((*b & 0xF0) | nib);
        }
    } else if (p->y_int32) { /* INT32 words of 8 packed INT4 */
        for (int64_t wd = 0; wd < n / 8; wd++) memcpy(arnq_view_at(v, row + wd * v->col_stride), out + 4 * wd, 4);
    } else {
        for (int64_t j = 0; j < n; j++) *arnq_view_at(v, row + j * v->col_stride) = out[j];
    }
}

void arnq_store_y(arnq_worker *w, int k, int64_t r, const float *q) {
    const arnq_params *p = w->c->p;
    const arnq_view *v = &w->c->y[k];
    size_t n = (size_t)p->n;
    int64_t row = arnq_view_row(v, r);
    /* byte-addressed and dense in the row: encode straight into the output */
    int direct = v->col_stride == 1 && (v->kind == ARNQ_ELEM_BYTES || row % 2 == 0);
    uint8_t *dst = v->kind == ARNQ_ELEM_NIBBLE ? v->data + row / 2 : arnq_view_at(v, row);
    uint8_t *out = direct ? dst : w->bytes;
    int fp8_mode = NUM_RINT | NUM_SAT | (p->opt.fp8_nan == ARNQ_FP8_NAN_ZERO ? NUM_NAN_TO_ZERO : 0);
    switch (p->y_dtype) {
    case ACL_INT8: num_f32_to_int8_n(q, (int8_t *)out, n, NUM_RINT | NUM_SAT); break;
    case ACL_INT4: num_f32_to_int4_packed(q, out, n, NUM_RINT | NUM_SAT); break;
    case ACL_FLOAT8_E4M3FN: num_f32_to_fp8_e4m3fn_n(q, out, n, fp8_mode); break;
    case ACL_FLOAT8_E5M2: num_f32_to_fp8_e5m2_n(q, out, n, fp8_mode); break;
    case ACL_HIFLOAT8:
        num_f32_to_hif8_n(q, out, n, NUM_ROUND | NUM_SAT | (p->opt.hif8_nan_code ? 0 : NUM_NAN_TO_ZERO));
        break;
    default: break;
    }
    int fp8 = p->y_dtype == ACL_FLOAT8_E4M3FN || p->y_dtype == ACL_FLOAT8_E5M2;
    if (fp8 && p->opt.fp8_nan == ARNQ_FP8_NAN_POSITIVE) arnq_fp8_positive_nan(q, out, p->n);
    if (!direct) scatter_y(p, v, row, out);
}

void arnq_store_scale(const arnq_launch *c, int k, int64_t r, float scale) {
    const arnq_view *v = &c->scale[k];
    memcpy(arnq_view_at(v, arnq_view_row(v, r)), &scale, 4);
}
