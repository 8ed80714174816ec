/*
 * Rotary position embeddings (hicann/ops-transformer posembedding/): aclnnRotaryPositionEmbedding and its Grad,
 * aclnnApplyRotaryPosEmb and V2, aclnnInterleaveRope (RotaryPositionEmbedding's mode 3 on Ascend 950) -- generated wrappers (the op_api files only forward to
 * aclnnInner...); definitions in rotary.toml.
 *
 * y = x' * cos + rot(x) * sin over the last dim D, cos and sin broadcast over x's leading dims (a dim of 1), with
 * per mode (the documented formulas): half (0) rot(x) = [-x2, x1]; interleave (1) pairs (x[2i], x[2i+1]) ->
 * (-x[2i+1], x[2i]); quarter (2) [-x2, x1, -x4, x3]; interleave-half (3) x' = [x[0::2], x[1::2]], rot =
 * [-x[1::2], x[0::2]]; x' = x otherwise. The kernels' arithmetic (rotate_half*.h, rotate_interleaved_*.h,
 * apply_rotary_pos_emb_small.h / _compute_ab*.h): the products x' * cos and x * (+-sin) rounded, then their sum
 * rounded, one cast to the dtype: in fp32 with RINT (RotaryPositionEmbedding, both SoCs; ApplyRotaryPosEmb for
 * FLOAT), in fp16 (ApplyRotaryPosEmb FLOAT16 on Atlas A2: its ARPESmall / ComputeAB compute in half), in fp32 with
 * a round-half-away cast (ApplyRotaryPosEmb BF16 on Atlas A2: CAST_ROUND). The Grad: dx = dy * cos + rot^T(dy *
 * sin) (each dx element one product of each kind, fp32 steps), dcos = sum of dy * x', dsin = sum of dy * rot(x)
 * over the broadcast dims in float64 rounded once (its kernel accumulates in fp32 in its tiling's order).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "rope_row.h"

#define RP_MAX_DIM 4

enum { RP_FWD, RP_GRAD, RP_APPLY };
enum { RP_HALF, RP_INTERLEAVE, RP_QUARTER, RP_INTERLEAVE_HALF };
enum { RP_F32, RP_F16_NATIVE, RP_BF16_ROUND };
_Static_assert(RP_INTERLEAVE_HALF == ROPE_ROW_INTERLEAVE_HALF && RP_QUARTER == ROPE_ROW_QUARTER, "rope_row.h modes");

typedef struct {
    int kind, mode, arith;
    int has_x;                         /* Grad: xOptional given (dcos, dsin computed) */
    int64_t d;                         /* the last dim */
    int64_t ndim;                      /* of x (q), cos */
    int64_t xs[2][RP_MAX_DIM];         /* shapes of the tensors cos broadcasts to (x or dy; q and k) */
    int64_t cs[RP_MAX_DIM];            /* cos's shape */
} rp_params;

/* x'[d] = x[p1(d)], rot(x)[d] = sign * x[src(d)]. */
static void rp_map(int mode, int64_t D, int64_t d, int64_t *p1, int64_t *src, float *sign) {
    int64_t h = D / 2, q = D / 4;
    *p1 = d;
    switch (mode) {
    case RP_HALF:
        *src = d < h ? d + h : d - h, *sign = d < h ? -1.0f : 1.0f;
        break;
    case RP_INTERLEAVE:
        *src = d % 2 ? d - 1 : d + 1, *sign = d % 2 ? 1.0f : -1.0f;
        break;
    case RP_QUARTER: {
        int64_t k = d / q, j = d % q;
        static const int64_t from[4] = {1, 0, 3, 2};
        *src = from[k] * q + j, *sign = k % 2 ? 1.0f : -1.0f;
        break;
    }
    default:   /* interleave-half */
        *p1 = d < h ? 2 * d : 2 * (d - h) + 1;
        *src = d < h ? 2 * d + 1 : 2 * (d - h), *sign = d < h ? -1.0f : 1.0f;
        break;
    }
}

static float rp_round(float v, aclDataType dt) { return (float)ew_cast((ew_value){v, 0}, ACL_FLOAT, dt).f; }

/* fp32 to bf16, ties away from zero (CAST_ROUND), kept as the float it is. */
static float rp_bf16_away(float v) {
    if (isnan(v) || isinf(v)) return v;
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u = (u + 0x8000u) & 0xffff0000u;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* The cos row of x's row r (x's leading dims xs, cos's cs: a 1 broadcasts). */
static int64_t rp_cos_row(const rp_params *p, const int64_t *xs, int64_t r) {
    int64_t row = 0, mul = 1;
    for (int64_t i = p->ndim - 2; i >= 0; i--) {
        int64_t idx = r % xs[i];
        r /= xs[i];
        if (p->cs[i] != 1) row += idx * mul;
        mul *= p->cs[i];
    }
    return row;
}

/* One tensor's rows (forward and ApplyRotaryPosEmb): y = x' * cos + rot(x) * sin. */
static void rp_rows(const rp_params *p, const int64_t *xs, const float *x, const float *c, const float *s, float *y,
                    aclDataType dt) {
    int64_t D = p->d, rows = 1;
    for (int64_t i = 0; i + 1 < p->ndim; i++) rows *= xs[i];
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * D, *cr = c + rp_cos_row(p, xs, r) * D, *sr = s + (cr - c);
        for (int64_t d = 0; d < D; d++) {
            int64_t p1, src;
            float sign;
            rp_map(p->mode, D, d, &p1, &src, &sign);
            float a = xr[p1] * cr[d], b = (sign * xr[src]) * sr[d], v;
            if (p->arith == RP_F16_NATIVE) {
                a = rp_round(a, ACL_FLOAT16), b = rp_round(b, ACL_FLOAT16);
                v = rp_round(a + b, ACL_FLOAT16);
            } else {
                v = a + b;
                if (p->arith == RP_BF16_ROUND && dt == ACL_BF16) v = rp_bf16_away(v);
            }
            y[r * D + d] = v;
        }
    }
}

static void rp_grad(const rp_params *p, const float *dy, const float *c, const float *s, const float *x, float *dx,
                    double *dc, double *ds) {
    int64_t D = p->d, rows = 1;
    for (int64_t i = 0; i + 1 < p->ndim; i++) rows *= p->xs[0][i];
    for (int64_t r = 0; r < rows; r++) {
        int64_t cr = rp_cos_row(p, p->xs[0], r) * D;
        const float *g = dy + r * D;
        float *a = dx + r * D;
        for (int64_t d = 0; d < D; d++) a[d] = 0.0f;
        for (int64_t d = 0; d < D; d++) {   /* dx[p1] = dy * cos, dx[src] += sign * dy * sin: one of each */
            int64_t p1, src;
            float sign;
            rp_map(p->mode, D, d, &p1, &src, &sign);
            a[p1] += g[d] * c[cr + d];
            a[src] += (sign * g[d]) * s[cr + d];
            if (p->has_x) {
                const float *xr = x + r * D;
                dc[cr + d] += (double)g[d] * xr[p1];
                ds[cr + d] += (double)g[d] * (sign * xr[src]);
            }
        }
    }
}

/* rope_row.h: one row of the fp32 steps, through rp_rows (a one-dimensional x of D elements). */
void rope_row_f32(int mode, int64_t D, const float *x, const float *c, const float *s, float *y) {
    rp_params p = {.kind = RP_FWD, .mode = mode, .arith = RP_F32, .d = D, .ndim = 1};
    int64_t xs[RP_MAX_DIM] = {D};
    p.cs[0] = D;
    rp_rows(&p, xs, x, c, s, y, ACL_FLOAT);
}

void rope_kernel(const pyaclnn_stub_launch *launch) {
    const rp_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int nx = p->kind == RP_APPLY ? 2 : 1;
    int ci = p->kind == RP_APPLY ? 2 : 1;   /* cos, sin follow x (dy), or q and k */
    float *c = tv_load_float(&launch->inputs[ci]), *s = tv_load_float(&launch->inputs[ci + 1]);
    float *x[2] = {NULL, NULL}, *y[2] = {NULL, NULL}, *xg = NULL;
    double *dc = NULL, *ds = NULL;
    int ok = c && s;
    for (int k = 0; k < nx; k++) {
        int64_t n = pyaclnn_stub_numel(&launch->inputs[k]);
        x[k] = tv_load_float(&launch->inputs[k]);
        y[k] = tv_alloc(n, sizeof(float));
        ok = ok && x[k] && y[k];
    }
    if (p->kind == RP_GRAD && p->has_x) {
        int64_t nc = pyaclnn_stub_numel(&launch->inputs[1]);
        xg = tv_load_float(&launch->inputs[3]);
        dc = calloc((size_t)nc + 1, sizeof(double)), ds = calloc((size_t)nc + 1, sizeof(double));
        ok = ok && xg && dc && ds;
    }
    if (!ok) {
        tv_fail_oom(launch);
    } else if (p->kind == RP_GRAD) {
        rp_grad(p, x[0], c, s, xg, y[0], dc, ds);
        tv_store_float(&launch->outputs[0], y[0]);
        if (p->has_x) tv_store_double(&launch->outputs[1], dc), tv_store_double(&launch->outputs[2], ds);
    } else {
        for (int k = 0; k < nx; k++) {
            rp_rows(p, p->xs[k], x[k], c, s, y[k], launch->inputs[k].dtype);
            tv_store_float(&launch->outputs[k], y[k]);
        }
    }
    free(c), free(s), free(x[0]), free(x[1]), free(y[0]), free(y[1]), free(xg), free(dc), free(ds);
}

/* ---- steps: the tilings' checks (561002) ---------------------------------------------------------- */

#define rp_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

static int rp_same_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int64_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* The RotaryPositionEmbedding(Grad) tilings' common checks: the mode (Atlas A2: half and interleave; Ascend 950:
 * the four), 4-dim tensors, D even (quarter: a multiple of 4) and at most 896 (A2) / 1024 (950), cos and sin of one
 * shape, D shared, cos's leading dims 1 or x's and not (1, S, N) (the documented patterns). */
static aclnnStatus rp_common(op_call *c, const op_step *s, int64_t mode, const pyaclnn_stub_tensor *x,
                             const pyaclnn_stub_tensor *co, const pyaclnn_stub_tensor *si, rp_params *p) {
    int a2 = !ew_soc_is_950();
    char b1[160], b2[160];
    if (mode < 0 || mode > (a2 ? 1 : 3))
        return rp_fail(c, "mode %lld is not supported (%s)", (long long)mode, a2 ? "0 half, 1 interleave on Atlas A2"
                                                                                : "0 half, 1 interleave, 2 quarter, 3 interleave-half");
    if (x->ndim != 4 || co->ndim != 4 || si->ndim != 4) return rp_fail(c, "the input shape must be 4-dimensional.");
    int64_t D = x->shape[3], limit = a2 ? 896 : 1024;
    if (D > limit) return rp_fail(c, "input last dim (head_dim) should be less than %lld.", (long long)limit);
    if (D % (mode == RP_QUARTER ? 4 : 2))
        return rp_fail(c, "input last dim (head_dim) must be a multiple of %d.", mode == RP_QUARTER ? 4 : 2);
    if (!rp_same_shape(co, si)) return rp_fail(c, "cos shape and sin shape should be equal.");
    if (co->shape[3] != D)
        return rp_fail(c, "input last dim (head_dim) should be equal, but get %s [%lld] and cos [%lld].", op_pname(c, s, 0),
                       (long long)D, (long long)co->shape[3]);
    int ones = 0;
    for (int i = 0; i < 3; i++) {
        if (co->shape[i] != 1 && co->shape[i] != x->shape[i])
            return rp_fail(c, "cos %s does not broadcast to %s %s", tv_shape_text(co->shape, 4, b1, sizeof b1),
                           op_pname(c, s, 0), tv_shape_text(x->shape, 4, b2, sizeof b2));
        ones |= (co->shape[i] == 1 && x->shape[i] != 1) << i;
    }
    if (ones == 1)
        return rp_fail(c, "cos %s: the shape (1, S, N, D) is not supported (cos: 111D, BSND, B1ND, BS1D, 11ND, 1S1D, "
                       "B11D)", tv_shape_text(co->shape, 4, b1, sizeof b1));
    p->mode = (int)mode;
    p->d = D;
    p->ndim = 4;
    memcpy(p->xs[0], x->shape, sizeof p->xs[0]);
    memcpy(p->cs, co->shape, sizeof p->cs);
    return ACLNN_SUCCESS;
}

/* RotaryPositionEmbedding's tiling for x cos sin out (s's first four operands); an empty x with an empty out runs
 * nothing. */
static aclnnStatus rope_fwd_plan(op_call *c, const op_step *s, int64_t mode) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *out = op_tensor(c, s, 3);
    if (pyaclnn_stub_numel(x) == 0 && pyaclnn_stub_numel(out) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    rp_params *p = op_params(c, sizeof *p);
    aclnnStatus rc = rp_common(c, s, mode, x, op_tensor(c, s, 1), op_tensor(c, s, 2), p);
    if (rc) return rc;
    if (!rp_same_shape(x, out)) return rp_fail(c, "%s and %s shapes should be equal.", op_pname(c, s, 0), op_pname(c, s, 3));
    p->kind = RP_FWD;
    p->arith = RP_F32;
    return ACLNN_SUCCESS;
}

/* rope_plan x cos sin out mode: RotaryPositionEmbedding's tiling. */
aclnnStatus opc_rope_plan(op_call *c, const op_step *s) { return rope_fwd_plan(c, s, op_argument(c, s, 4)->i); }

/* ir_rows x cos sin out: InterleaveRope's definition rows -- Ascend 950 runs RotaryPositionEmbedding's
 * (aclnn_interleave_rope.cpp: SocVersion ASCEND910_95), Atlas A2 its own (FLOAT16, BF16). */
aclnnStatus opc_ir_rows(op_call *c, const op_step *s) {
    op_step t = *s;
    t.text = ew_soc_is_950() ? "FLOAT16 FLOAT16 FLOAT16 FLOAT16|FLOAT FLOAT FLOAT FLOAT|BFLOAT16 BFLOAT16 BFLOAT16 BFLOAT16"
                             : "FLOAT16 FLOAT16 FLOAT16 FLOAT16|BFLOAT16 BFLOAT16 BFLOAT16 BFLOAT16";
    return opc_dtype_rows(c, &t);
}

/* ir_plan x cos sin out: Ascend 950: RotaryPositionEmbedding in mode 3 (interleave-half); Atlas A2: InterleaveRope's
 * tiling (interleave_rope_tiling.cpp): x (B, N, S, D) of positive sizes, D 64, cos and sin of one shape (B, 1, S or
 * 1, D); out must hold x's elements (the tiling does not look at it: the emulator checks). */
aclnnStatus opc_ir_plan(op_call *c, const op_step *s) {
    if (ew_soc_is_950()) return rope_fwd_plan(c, s, RP_INTERLEAVE_HALF);
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *co = op_tensor(c, s, 1), *si = op_tensor(c, s, 2),
                              *out = op_tensor(c, s, 3);
    static const char *const what[4] = {"batchSize", "numHead", "seqLength", "hiddenDim"};
    if (x->ndim != 4 || co->ndim != 4 || si->ndim != 4) return rp_fail(c, "Shape must be (B,N,S,D).");
    for (int i = 0; i < 4; i++)
        if (x->shape[i] <= 0) return rp_fail(c, "%s should be greater than 0.", what[i]);
    if (x->shape[3] != 64) return rp_fail(c, "hiddenDim must be 64.");
    if (!rp_same_shape(co, si)) return rp_fail(c, "cos and sin shape must be the same.");
    if (co->shape[0] != x->shape[0]) return rp_fail(c, "cos or sin batchSize must same as x batchSize.");
    if (co->shape[1] != 1) return rp_fail(c, "cos or sin numHead must be 1.");
    if (co->shape[2] != x->shape[2] && co->shape[2] != 1)
        return rp_fail(c, "cos or sin seqLength must be 1 or the same as x seqLength.");
    if (co->shape[3] != x->shape[3]) return rp_fail(c, "cos or sin hiddenDim must same as x hiddenDim.");
    if (!rp_same_shape(x, out)) return rp_fail(c, "x and out shapes should be equal.");
    rp_params *p = op_params(c, sizeof *p);
    p->kind = RP_FWD;
    p->mode = RP_INTERLEAVE_HALF;
    p->arith = RP_F32;
    p->d = 64;
    p->ndim = 4;
    memcpy(p->xs[0], x->shape, sizeof p->xs[0]);
    memcpy(p->cs, co->shape, sizeof p->cs);
    return ACLNN_SUCCESS;
}

/* rope_grad_plan dy cos sin x dx dcos dsin mode: the Grad's tiling (dy, x and dx of one shape; dcos and dsin cos's). */
aclnnStatus opc_rope_grad_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *dy = op_tensor(c, s, 0), *co = op_tensor(c, s, 1), *x = op_tensor(c, s, 3);
    const pyaclnn_stub_tensor *dx = op_tensor(c, s, 4), *dc = op_tensor(c, s, 5), *ds = op_tensor(c, s, 6);
    if (pyaclnn_stub_numel(dy) == 0 && pyaclnn_stub_numel(dx) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    rp_params *p = op_params(c, sizeof *p);
    aclnnStatus rc = rp_common(c, s, op_argument(c, s, 7)->i, dy, co, op_tensor(c, s, 2), p);
    if (rc) return rc;
    if (!rp_same_shape(dy, dx) || (x->present && !rp_same_shape(dy, x)))
        return rp_fail(c, "dy, x and dx shapes should be equal.");
    if (!rp_same_shape(co, dc) || !rp_same_shape(co, ds)) return rp_fail(c, "cos, dcos and dsin shapes should be equal.");
    p->kind = RP_GRAD;
    p->arith = RP_F32;
    p->has_x = x->present && pyaclnn_stub_numel(x) > 0;
    return ACLNN_SUCCESS;
}

/* arpe_plan q k cos sin layout [rotaryMode]: ApplyRotaryPosEmb's tiling. Atlas A2 (apply_rotary_pos_emb_tiling.cpp):
 * 4-dim q, k, cos, sin of one dtype, cos == sin, none empty, layout 1 (BSND), dims 0, 1, 3 shared, D 128, cos's N
 * 1; its tiling never reads rotaryMode: the kernel rotates halves (followed). Ascend 950 (its tiling and kernel
 * are not public; the documented constraints): layouts 1 BSND, 2 SBND, 3 BNSD (4-dim) and 4 TND (3-dim), q and k
 * equal but for N, cos and sin (q's shape with N 1; a 1 broadcasts) of q's S and D, rotaryMode half, quarter or
 * interleave, D even (quarter: a multiple of 4). */
aclnnStatus opc_arpe_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *q = op_tensor(c, s, 0), *k = op_tensor(c, s, 1), *co = op_tensor(c, s, 2),
                              *si = op_tensor(c, s, 3);
    int64_t layout = op_argument(c, s, 4)->i;
    const char *ms = s->np > 5 ? (const char *)op_argument(c, s, 5)->p : "half";
    int a2 = !ew_soc_is_950();
    rp_params *p = op_params(c, sizeof *p);
    if (pyaclnn_stub_numel(q) == 0 || pyaclnn_stub_numel(k) == 0 || pyaclnn_stub_numel(co) == 0 ||
        pyaclnn_stub_numel(si) == 0)
        return rp_fail(c, "input can not be empty.");
    if (a2) {
        if (q->ndim != 4) return rp_fail(c, "q shape dims is not four");
        if (k->ndim != q->ndim) return rp_fail(c, "k shape dims is not same as q dims");
        if (co->ndim != 4) return rp_fail(c, "cos shape dims is not four");
        if (si->ndim != 4 || !rp_same_shape(co, si)) return rp_fail(c, "cos and sin shape not equal or rank not four");
        if (layout != 1) return rp_fail(c, "layout is not one");
        for (int i = 0; i < 4; i += i == 1 ? 2 : 1)
            if (k->shape[i] != q->shape[i] || co->shape[i] != k->shape[i]) return rp_fail(c, "all input dim%d must equal", i);
        if (q->shape[3] != 128) return rp_fail(c, "last dims is not 128");
        if (co->shape[2] != 1) return rp_fail(c, "cos dim2 is not one");
        if (k->dtype != q->dtype || co->dtype != q->dtype || si->dtype != q->dtype)
            return rp_fail(c, "input dtype not right");
        p->mode = RP_HALF;
        p->arith = q->dtype == ACL_FLOAT16 ? RP_F16_NATIVE : q->dtype == ACL_BF16 ? RP_BF16_ROUND : RP_F32;
    } else {
        int nd = layout == 4 ? 3 : 4, ndim_n = layout == 3 || layout == 4 ? 1 : 2;
        if (layout < 1 || layout > 4) return rp_fail(c, "layout %lld is not supported (1 BSND, 2 SBND, 3 BNSD, 4 TND)",
                                                      (long long)layout);
        if (q->ndim != nd || k->ndim != nd || co->ndim != nd || !rp_same_shape(co, si))
            return rp_fail(c, "query, key, cos and sin must have %d dims (layout %lld), cos and sin one shape", nd,
                           (long long)layout);
        if (ms == NULL || (strcmp(ms, "half") && strcmp(ms, "quarter") && strcmp(ms, "interleave")))
            return rp_fail(c, "rotaryMode %s is not supported (half, quarter, interleave)", ms ? ms : "(null)");
        p->mode = !strcmp(ms, "half") ? RP_HALF : !strcmp(ms, "quarter") ? RP_QUARTER : RP_INTERLEAVE;
        for (int i = 0; i < nd; i++) {
            if (i != ndim_n && k->shape[i] != q->shape[i]) return rp_fail(c, "queryRef and keyRef differ in dim %d", i);
            if (co->shape[i] != 1 && co->shape[i] != q->shape[i]) return rp_fail(c, "cos does not broadcast to queryRef");
            if (i == ndim_n && co->shape[i] != 1) return rp_fail(c, "cos's N dim must be 1");
        }
        if (co->shape[nd - 1] != q->shape[nd - 1]) return rp_fail(c, "cos's D must be queryRef's");
        if (q->shape[nd - 1] % (p->mode == RP_QUARTER ? 4 : 2))
            return rp_fail(c, "the last dim must be a multiple of %d", p->mode == RP_QUARTER ? 4 : 2);
        p->arith = RP_F32;
    }
    p->kind = RP_APPLY;
    p->ndim = q->ndim;
    p->d = q->shape[q->ndim - 1];
    memcpy(p->xs[0], q->shape, sizeof p->xs[0]);
    memcpy(p->xs[1], k->shape, sizeof p->xs[1]);
    memcpy(p->cs, co->shape, sizeof p->cs);
    return ACLNN_SUCCESS;
}
