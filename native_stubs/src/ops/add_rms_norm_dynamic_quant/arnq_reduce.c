/*
 * Sum of squares and rstd of one row, in each template's exact order (spec B.8.2, B.9.2).
 *
 * Every function gets q[j] = f32(x[j]*x[j]) and returns S; every addition is one fp32 add (one
 * rounding), in the order the vendor kernel performs it. The only unpublished order is inside one
 * 64-lane reduce (WholeReduceSum / Reg::ReduceSum, open question Q2): adjacent pairs by default
 * (Huawei documents that order for ReduceSum), lane l + lane l+w/2 with PYACLNN_STUB_ARNQ_TREE64=halves.
 * Lanes a reduce does not cover count as +0.0.
 */
#include "arnq_opt.h" /* first: compile options */

#include <math.h>
#include <string.h>

#include "arnq.h"
#include "arnq_avx2.h"

#define LANES 64
#define LEVEL_SLOTS 256   /* one level buffer of the 950 split template: 4 vector registers */
#define MAX_PARTIALS 8192 /* ReduceSumRstd partials (P/128) we keep on the stack            */

static int64_t pow2_le(int64_t n) {
    int64_t p = 1;
    while (p <= n / 2) p *= 2;
    return p;
}

static int64_t ceil256(int64_t n) { return (n + 255) / 256 * 256; }

/* One level of the tree: w sums out of 2w values. Constant trip counts let the compiler unroll and
 * vectorise every level. */
#define TREE_LEVEL(dst, src, w, halves)                                            \
    do {                                                                         \
        if (halves)                                                              \
            for (int i_ = 0; i_ < (w); i_++) (dst)[i_] = (src)[i_] + (src)[i_ + (w)]; \
        else                                                                     \
            for (int i_ = 0; i_ < (w); i_++) (dst)[i_] = (src)[2 * i_] + (src)[2 * i_ + 1]; \
    } while (0)

static float tree64_full(const float *v, int halves) {
    float l1[32], l2[16], l3[8], l4[4], l5[2];
    TREE_LEVEL(l1, v, 32, halves);
    TREE_LEVEL(l2, l1, 16, halves);
    TREE_LEVEL(l3, l2, 8, halves);
    TREE_LEVEL(l4, l3, 4, halves);
    TREE_LEVEL(l5, l4, 2, halves);
    return l5[0] + l5[1];
}

float arnq_tree64(const float *v, int lanes, int halves) {
    if (lanes == LANES) return tree64_full(v, halves);
    float a[LANES]; /* missing lanes are +0.0 */
    memcpy(a, v, (size_t)lanes * sizeof(float));
    for (int i = lanes; i < LANES; i++) a[i] = 0.0f;
    return tree64_full(a, halves);
}

/* ReduceSumHalfInterval: fold the part past the largest power of two b <= n onto the front,
 * halve while b > 64, then one 64-lane reduce. */
float arnq_half_interval(float *q, int64_t n, int halves) {
    if (n <= LANES) return arnq_tree64(q, (int)n, halves);
    int64_t body = pow2_le(n);
    for (int64_t i = 0; i < n - body; i++) q[i] = q[i] + q[body + i];
    while (body > LANES) {
        body /= 2;
        for (int64_t i = 0; i < body; i++) q[i] = q[i] + q[body + i];
    }
    return arnq_tree64(q, LANES, halves);
}

/* A2 slice-D: S = 0, then S += HalfInterval(slice) over the full slices, then the tail slice
 * (tail = n mod L, or L when that is 0). */
float arnq_slice_d(float *q, int64_t n, int64_t slice, int halves) {
    int64_t tail = n % slice ? n % slice : slice;
    int64_t loops = (n - tail) / slice;
    float s = 0.0f;
    for (int64_t i = 0; i < loops; i++) s = s + arnq_half_interval(q + i * slice, slice, halves);
    return s + arnq_half_interval(q + loops * slice, tail, halves);
}

/* 950 perf (CalculateSquareReduceSum): fold at F = 2^floor(log2(ceil16(n) - 1)), one partial per
 * 64 lanes, then one reduce of the partials (two registers added lane-wise when there are 128). */
float arnq_fold_reduce(float *q, int64_t n, int halves) {
    float lanes[LANES];
    if (n <= LANES) return arnq_tree64(q, (int)n, halves);
    if (n <= 2 * LANES) {
        for (int l = 0; l < LANES; l++) lanes[l] = l < n - LANES ? q[l] + q[LANES + l] : q[l];
        return arnq_tree64(lanes, LANES, halves);
    }
    int64_t fold = pow2_le((n + 15) / 16 * 16 - 1);
    int64_t tail = n - fold; /* 0 < tail <= fold */
    for (int64_t i = 0; i < tail; i++) q[i] = q[i] + q[fold + i];
    float partials[2 * LANES];
    int64_t count = fold / LANES; /* 2 .. 128 */
    for (int64_t c = 0; c < count; c++) partials[c] = arnq_tree64(q + c * LANES, LANES, halves);
    if (count <= LANES) return arnq_tree64(partials, (int)count, halves);
    for (int l = 0; l < LANES; l++) lanes[l] = partials[l] + partials[LANES + l];
    return arnq_tree64(lanes, LANES, halves);
}

/* partials[c] = reduce-sum of the 64 lanes a[l]^2 (+ b[l]^2) of chunk c (squares rounded, then
 * their sum), for c < chunks. */
static void square_trees(const float *a, const float *b, int64_t chunks, float *partials, int halves,
                         int avx2) {
    if (avx2 && !halves) {
        arnq_avx2_square_trees(a, b, chunks, partials);
        return;
    }
    float lanes[LANES];
    for (int64_t c = 0; c < chunks; c++) {
        const float *ac = a + c * LANES, *bc = b ? b + c * LANES : NULL;
        for (int l = 0; l < LANES; l++) {
            float sa = ac[l] * ac[l];
            lanes[l] = bc ? sa + bc[l] * bc[l] : sa;
        }
        partials[c] = arnq_tree64(lanes, LANES, halves);
    }
}

/* arnq_fold_reduce from x itself, squaring on the way (q[j] = x[j] * x[j], one rounding, as the
 * caller's square pass would): each chunk's 64 folded lanes are made in registers, so the row of
 * squares is never stored. */
float arnq_fold_reduce_x(const float *x, int64_t n, int halves, int avx2) {
    float lanes[LANES];
    if (n <= 2 * LANES) {
        float q[2 * LANES];
        for (int64_t i = 0; i < n; i++) q[i] = x[i] * x[i];
        return arnq_fold_reduce(q, n, halves);
    }
    int64_t fold = pow2_le((n + 15) / 16 * 16 - 1);
    int64_t tail = n - fold; /* 0 < tail <= fold: lanes below tail have a partner at +fold */
    float partials[2 * LANES];
    int64_t count = fold / LANES; /* 2 .. 128 */
    int64_t c = tail / LANES;     /* chunks folded in every lane */
    square_trees(x, x + fold, c, partials, halves, avx2);
    if (c < count && tail % LANES) { /* the chunk the fold ends in */
        const float *a = x + c * LANES, *b = a + fold;
        for (int l = 0; l < LANES; l++) {
            float sa = a[l] * a[l];
            lanes[l] = l < tail % LANES ? sa + b[l] * b[l] : sa;
        }
        partials[c] = arnq_tree64(lanes, LANES, halves);
        c++;
    }
    square_trees(x + c * LANES, NULL, count - c, partials + c, halves, avx2);
    if (count <= LANES) return arnq_tree64(partials, (int)count, halves);
    for (int l = 0; l < LANES; l++) lanes[l] = partials[l] + partials[LANES + l];
    return arnq_tree64(lanes, LANES, halves);
}

/* NormCommon ReduceSumRstd without its rstd step: q holds `count` values (a multiple of 256,
 * zero-padded), folded at power split p (p <= count < 2p). Pairs of registers are added lane-wise
 * and reduced to one partial each; partials are merged 128 at a time when there are >= 128. */
static float reduce_sum_rstd(const float *q, int64_t count, int64_t p, int halves) {
    float partials[MAX_PARTIALS], lanes[LANES];
    int64_t rem = count - p, np = 0;
    for (int64_t o = 0; o < rem; o += 2 * LANES) {
        for (int l = 0; l < LANES; l++) {
            float a = q[o + l] + q[p + o + l];
            float b = q[o + LANES + l] + q[p + o + LANES + l];
            lanes[l] = a + b;
        }
        partials[np++] = arnq_tree64(lanes, LANES, halves);
    }
    for (int64_t o = rem; o < p; o += 2 * LANES) {
        for (int l = 0; l < LANES; l++) lanes[l] = q[o + l] + q[o + LANES + l];
        partials[np++] = arnq_tree64(lanes, LANES, halves);
    }
    if (np < 2 * LANES) return arnq_tree64(partials, (int)np, halves);
    int64_t merged = np / (2 * LANES); /* <= 64 while p <= 2^20 (UB option capped accordingly) */
    for (int64_t i = 0; i < merged; i++) {
        for (int l = 0; l < LANES; l++) lanes[l] = partials[2 * LANES * i + l] + partials[2 * LANES * i + LANES + l];
        partials[i] = arnq_tree64(lanes, LANES, halves);
    }
    return arnq_tree64(partials, (int)merged, halves);
}

float arnq_normal_reduce(float *q, int64_t n, int halves) {
    int64_t c = ceil256(n);
    for (int64_t i = n; i < c; i++) q[i] = 0.0f;
    return reduce_sum_rstd(q, c, pow2_le(c), halves);
}

/* LevelMergeRstd of one 256-slot level buffer: lane l = (a[l] + a[64+l]) + (a[128+l] + a[192+l]). */
static float level_merge(const float *a, int halves) {
    float lanes[LANES];
    for (int l = 0; l < LANES; l++) {
        float x = a[l] + a[LANES + l];
        float y = a[2 * LANES + l] + a[3 * LANES + l];
        lanes[l] = x + y;
    }
    return arnq_tree64(lanes, LANES, halves);
}

typedef struct {
    float level[3][LEVEL_SLOTS];
    int used[3];
} split_levels;

/* Push one chunk sum into level 1; a full level is merged into the next one. As in the vendor
 * kernel the merged buffer is not cleared (only its count is reset). */
static void push(split_levels *lv, float v, int halves) {
    lv->level[0][lv->used[0]++] = v;
    for (int k = 0; k < 2; k++) {
        if (lv->used[k] == LEVEL_SLOTS) {
            lv->level[k + 1][lv->used[k + 1]++] = level_merge(lv->level[k], halves);
            lv->used[k] = 0;
        }
    }
}

typedef struct {
    const float *q;
    int64_t pos;
    float *pad;
    int halves;
} split_walk;

/* The next `count` columns (zero-padded to a multiple of 256), ReduceSumRstd-folded at `fold`. */
static float chunk_sum(split_walk *w, int64_t count, int64_t fold) {
    const float *src = w->q + w->pos;
    int64_t padded = ceil256(count);
    w->pos += count;
    if (padded != count) {
        memcpy(w->pad, src, (size_t)count * sizeof(float));
        for (int64_t i = count; i < padded; i++) w->pad[i] = 0.0f;
        src = w->pad;
    }
    return reduce_sum_rstd(src, padded, fold, w->halves);
}

/* 950 split (B.9.2): chunk sums pushed into level buffers walking the row left to right. */
float arnq_split_reduce(const float *q, int64_t n, int64_t chunk, int64_t loop, float *pad, int halves) {
    split_levels lv;
    memset(&lv, 0, sizeof lv);
    split_walk w = {q, 0, pad, halves};
    int64_t half = chunk / 2;
    int64_t tail = n - chunk * loop;
    int64_t tail_loops = tail / chunk, tail_tail = tail % chunk;
    int64_t master_loops = loop - tail_loops - (tail_tail ? 1 : 0);

    for (int64_t i = 0; i < tail_loops; i++) {
        float first = chunk_sum(&w, chunk, chunk);
        push(&lv, first + chunk_sum(&w, chunk, chunk), halves);
    }
    if (tail_tail > 0 && tail_tail <= half) {
        float first = chunk_sum(&w, half + tail_tail, half);
        push(&lv, first + chunk_sum(&w, half, half), halves);
    } else if (tail_tail > half) {
        float first = chunk_sum(&w, chunk, chunk);
        push(&lv, first + chunk_sum(&w, tail_tail, half), halves);
    }
    for (int64_t i = 0; i < master_loops; i++) push(&lv, chunk_sum(&w, chunk, chunk), halves);

    if (lv.used[0] > 0 && lv.used[0] < LEVEL_SLOTS) return level_merge(lv.level[0], halves);
    if (lv.used[1] > 0 && lv.used[1] < LEVEL_SLOTS) return level_merge(lv.level[1], halves);
    return level_merge(lv.level[2], halves);
}

/* ---- rstd ------------------------------------------------------------------------------------ */

/* Scalar unit `1 / sqrt(S * avg + eps)` (A2 all templates, 950 single row), open question Q4. */
float arnq_scalar_rstd(float s, float avg, float eps, int mode) {
    if (mode == ARNQ_RSTD_DOUBLE) {
        double t = (double)s * (double)avg;
        t = t + (double)eps;
        return (float)(1.0 / sqrt(t));
    }
    float t;
    if (mode == ARNQ_RSTD_FMA) {
        t = fmaf(s, avg, eps);
    } else {
        t = s * avg;
        t = t + eps;
    }
    float r = sqrtf(t);
    return 1.0f / r;
}

/* 950 normal / split: vector Muls, Adds, Sqrt, then Div(1, .). */
float arnq_vector_rstd(float s, float avg, float eps) {
    float t = s * avg;
    t = t + eps;
    float r = sqrtf(t);
    return 1.0f / r;
}

/* acc + a*b: one rounding (MULA assumed fused, Q5) or two. */
static float mula(float acc, float a, float b, int unfused) {
    if (!unfused) return fmaf(a, b, acc);
    float p = a * b;
    return acc + p;
}

/* 950 perf: NormCommon ComputeRstdNewtonRaphson<NEED_MAX, NEED_AVG_FACTOR> (B.9.2). */
float arnq_newton_rstd(float s, float avg, float eps, int unfused) {
    float v = s * avg;
    v = v + eps;
    if (!(v >= -99.99f) && v == v) v = -99.99f; /* Maxs(v, -99.99); a NaN stays NaN */
    float r = 1.0f / v;
    float y = sqrtf(r);
    float t = v * -0.5f;
    t = t * y;
    float t1 = mula(1.5f, t, y, unfused);
    float rstd = y * t1;
    float s1 = mula(1.0f, v * -1.0f, r, unfused);
    r = mula(r, rstd * -1.0f, rstd, unfused);
    s1 = mula(s1, v, r, unfused);
    s1 = s1 * rstd;
    rstd = mula(rstd, s1, 0.5f, unfused);
    if (v == INFINITY) rstd = 0.0f;
    if (v == 0.0f) rstd = INFINITY;
    return rstd;
}
