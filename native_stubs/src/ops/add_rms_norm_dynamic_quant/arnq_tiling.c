/*
 * Template (kernel) selection and workspace size: the integer arithmetic of the vendor tilings
 * (spec B.8.1 for Atlas A2/A3 "arch22", B.9.1 + appendix D for Ascend 950 "arch35").
 */
#include "arnq.h"

#define UB_A2 196608       /* Atlas A2/A3 unified buffer bytes                        */
#define XS 2               /* bytes of an fp16 / bf16 element                          */
#define VL 64              /* fp32 lanes of one vector register                        */
#define SYS_WORKSPACE (16u * 1024u * 1024u) /* library system workspace, both chips   */
#define SLICE_LEN_INT8 8864
#define SLICE_LEN_INT4 8832
/* Vector cores the rows are spread over on the device (nominal: 910B1/B2, 950PR); only the
 * workspace size depends on it. */
#define CORES_A2 48
#define CORES_950 64

static int64_t ceil_to(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
static int64_t ceil_div(int64_t v, int64_t a) { return (v + a - 1) / a; }

static int64_t pow2_le(int64_t n) { /* largest power of two <= n (n >= 1) */
    int64_t p = 1;
    while (p <= n / 2) p *= 2;
    return p;
}

const char *arnq_template_name(arnq_template t) {
    switch (t) {
    case ARNQ_A2_NORMAL: return "normal (A2 tiling key 1)";
    case ARNQ_A2_SINGLE_ROW: return "single-row (A2 tiling key 2)";
    case ARNQ_A2_SLICE_D: return "slice-D (A2 tiling key 3)";
    case ARNQ_950_PERF: return "perf (950 mode 0)";
    case ARNQ_950_NORMAL: return "normal (950 mode 1)";
    case ARNQ_950_SINGLE_ROW: return "single-row (950 mode 2)";
    case ARNQ_950_SPLIT: return "split (950 mode 3)";
    case ARNQ_950_REDUCE_EMPTY: return "reduce-empty (950 mode 4)";
    }
    return "?";
}

/* ---- Atlas A2/A3 --------------------------------------------------------------------------- */

int64_t arnq_a2_slice_len(int y_int4) { return y_int4 ? SLICE_LEN_INT4 : SLICE_LEN_INT8; }

arnq_template arnq_select_a2(int64_t n, int y_int4, int has_beta) {
    int64_t da = ceil_to(n, y_int4 ? 64 : 32);
    int64_t available = UB_A2 - (da * XS * (has_beta ? 4 : 3) + 768);
    int64_t row_step = available / (16 * da + 8); /* C division: truncates toward zero */
    if (row_step >= 1) return ARNQ_A2_NORMAL;
    if (16 * da + 1024 <= UB_A2) return ARNQ_A2_SINGLE_ROW;
    return ARNQ_A2_SLICE_D;
}

/* ---- Ascend 950 (appendix D) ------------------------------------------------------------------ */

typedef struct {
    int64_t q1, q2, qb, beta, ub;
} cfg950;

/* CalUsedSize of the perf template for bm rows. */
static int64_t perf_used(const cfg950 *c, int64_t bm, int64_t a, int64_t b8, int64_t b32, int64_t fv) {
    int64_t rstd_rows = ceil_to(bm, 8);
    int64_t used = a * XS + c->qb * a * XS + 1024;
    used += bm * (3 * a * XS + 4 * a);
    used += bm * fv * 4;
    used += c->q1 * bm * (2 * b8 + 4 * b32);
    used += 2 * rstd_rows * 4;
    used += c->q1 * 2 * rstd_rows * 4;
    used += c->q2 * (bm * 2 * b8 + 2 * rstd_rows * 4);
    used += c->beta * a * XS;
    return used;
}

/* fullLoadBaseM: rows of length n that fit in UB at once (may be <= 0). */
static int64_t perf_base_m(const cfg950 *c, int64_t n) {
    int64_t a = ceil_to(n, 16), b8 = ceil_to(n, 32), b32 = ceil_to(n, 8);
    int64_t fold = a > 1 ? pow2_le(a - 1) : 1;
    int64_t fv = ceil_to(ceil_div(fold, VL), 32);
    int64_t last = c->ub - a * XS - c->qb * a * XS - 1024 - c->beta * a * XS;
    int64_t per_row = 3 * a * XS + 4 * a + 8 + 4 * fv + 4 * b32 + c->q1 * (2 * b8 + 8) + c->q2 * (2 * b8 + 8);
    int64_t bm = last / per_row;
    while (bm > 0 && perf_used(c, bm, a, b8, b32, fv) > c->ub) bm--;
    return bm;
}

/* CalUBTotalSize(baseM = 1, baseN = n) of the normal (split = 0) or split template. */
static int64_t ub_total(const cfg950 *c, int64_t n, int split) {
    int64_t ra = ceil_to(n, 256), a = ceil_to(n, 16), b8 = ceil_to(n, 32), b32 = ceil_to(n, 8);
    int64_t total = 3 * ra * XS + 4 * ra + 4 * ceil_to(ra / 128, 8) + a * XS + c->qb * a * XS;
    total += c->q1 * (b8 + 4 * b32) + c->beta * a * XS + c->q2 * (b8 + 4 * b32);
    total += 32 * (1 + c->q1 + c->q2);
    if (split) total += 3 * 4 * VL * 4 + VL * 4;
    return total;
}

int64_t arnq_split_chunk(int out1, int out2, int n_smooth, int has_beta, int64_t ub) {
    cfg950 c = {out1 != 0, out2 != 0, n_smooth, has_beta != 0, ub};
    int64_t chunk = 256;
    while (ub_total(&c, 2 * chunk, 1) <= ub) chunk *= 2;
    return chunk;
}

int64_t arnq_split_loop(int64_t n, int64_t chunk) {
    int64_t loop = 1;
    while (loop * 2 * chunk <= n) loop *= 2;
    return loop;
}

int arnq_select_950(int64_t n, int64_t m, int out1, int out2, int n_smooth, int has_beta, int64_t ub,
                    arnq_template *tmpl) {
    cfg950 c = {out1 != 0, out2 != 0, n_smooth, has_beta != 0, ub};
    if (n == 0) *tmpl = ARNQ_950_REDUCE_EMPTY;
    else if (m == 0) *tmpl = ARNQ_950_NORMAL; /* the kernel returns at once */
    else if (n <= 2 * VL * VL * 2 && perf_base_m(&c, n) >= 1) *tmpl = ARNQ_950_PERF;
    else if (ub_total(&c, n, 0) <= ub) *tmpl = ARNQ_950_NORMAL;
    else if (16 * ceil_to(n, 32) + 1024 <= ub) *tmpl = ARNQ_950_SINGLE_ROW;
    else if (ub_total(&c, 256, 1) <= ub) *tmpl = ARNQ_950_SPLIT;
    else return -1;
    return 0;
}

/* ---- workspace (B.13) ---------------------------------------------------------------------- */

uint64_t arnq_workspace_size(const arnq_params *p) {
    int64_t cores = p->soc == PYACLNN_SOC_A2 ? CORES_A2 : CORES_950;
    int64_t per_core = p->m > 0 ? ceil_div(p->m, cores) : 1;
    int64_t used = p->m > 0 ? ceil_div(p->m, per_core) : 1;
    uint64_t user = 0;
    switch (p->tmpl) {
    case ARNQ_A2_NORMAL:
    case ARNQ_A2_SINGLE_ROW: user = 1; break;
    case ARNQ_A2_SLICE_D: {
        /* rows of fp32 scratch per core: 1 without mask and smooth scales, else 2 */
        int rows = (p->mask_given || p->has_smooth1 || p->has_smooth2) ? 2 : 1;
        user = (uint64_t)used * (uint64_t)p->n * 4u * (uint64_t)rows;
        break;
    }
    case ARNQ_950_SPLIT: user = 3u * (uint64_t)used * (uint64_t)p->n * 4u; break;
    default: break;
    }
    return SYS_WORKSPACE + user;
}
