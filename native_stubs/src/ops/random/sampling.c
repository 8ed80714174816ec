/*
 * Random integers, Bernoulli draws, permutations and multinomial samples (sampling.toml), on the emulator's
 * Philox4x32-10 stream (kernels/philox.h: element i of a launch gets the words of counter (i, offset) under
 * key seed). The maps from words to values, recomputed by tests/reference/random.py:
 *
 *   r64(i)  = word 0 << 32 | word 1                                 (64 random bits of element i)
 *   u53(i)  = rnd_u53(word 0, word 1) in [0, 1)
 *   InplaceRandom(from, to): from + r64(i) mod (to - from), cast to selfRef's dtype (the NPU's Cast);
 *     WithoutFromTo: from = 0, to = 2^digits + 1 for FLOAT16 / BF16 / FLOAT / DOUBLE (11 / 8 / 24 / 53),
 *     the dtype's maximum + 1 for integers (2^63 for INT64), 2 for BOOL (torch's random_()).
 *   InplaceBernoulli(Tensor): 1 when rnd_u24(word 0) < fp32(p) (p: the scalar, or prob's element broadcast
 *     to selfRef's row-major position i), else 0, cast to selfRef's dtype.
 *   Randperm(n): 0 .. n-1 ordered by r64(i) (ties by i), cast to out's dtype.
 *   Multinomial: row b of self (weights w, n categories, their running sums c in double):
 *     with replacement, sample s = the first category j with w_j > 0 and c_j > u53(b * numsamples + s) * c_last;
 *     without, every category j gets e_j = -log(u53(b * n + j) + 2^-53) / w_j (w_j > 0, else inf) and the
 *     samples are the numsamples smallest e_j in increasing order (ties by j): the exponential race, whose
 *     order is that of drawing one by one without replacement.
 * Statistical fidelity: the NPU's own streams and algorithms are not reproduced.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/philox.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    uint64_t seed, offset;
    int64_t from;
    uint64_t range;      /* to - from (0: 2^64) */
    double prob;         /* InplaceBernoulli's scalar */
    int64_t n, samples, replacement;
} smp_params;

static uint64_t r64(const smp_params *p, uint64_t i) {
    uint32_t w[4];
    rnd_philox(p->seed, p->offset, i, w);
    return (uint64_t)w[0] << 32 | w[1];
}

static double u53(const smp_params *p, uint64_t i) {
    uint32_t w[4];
    rnd_philox(p->seed, p->offset, i, w);
    return rnd_u53(w[0], w[1]);
}

static int out_in_device(const pyaclnn_stub_launch *launch, const pyaclnn_stub_tensor *t) {
    if (op_view_in_device_memory(t, (int)(8 * ew_itemsize(t->dtype)))) return 1;
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
    return 0;
}

/* ---- InplaceRandom, InplaceRandomWithoutFromTo -------------------------------------------------------- */

typedef struct {
    const smp_params *p;
    aclDataType dtype;
} smp_ctx;

static void random_one(void *ctx, uint64_t i, unsigned char *at) {
    const smp_ctx *x = ctx;
    uint64_t r = r64(x->p, i);
    int64_t v = (int64_t)((uint64_t)x->p->from + (x->p->range ? r % x->p->range : r));
    ew_store(at, x->dtype, ew_cast((ew_value){0, v}, ACL_INT64, x->dtype));
}

void random_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!out_in_device(launch, self)) return;
    smp_ctx x = {launch->params, self->dtype};
    rnd_for_each(self, random_one, &x);
}

/* random_plan selfRef [from to] seed offset: from < to ("from %ld must be less than to %ld."); without from
 * and to, torch's random_() range of selfRef's dtype. */
aclnnStatus opc_random_plan(op_call *c, const op_step *s) {
    aclDataType dt = op_tensor(c, s, 0)->dtype;
    smp_params *prm = op_params(c, sizeof *prm);
    int k = 1;
    if (s->np == 5) {
        int64_t from = op_argument(c, s, 1)->i, to = op_argument(c, s, 2)->i;
        if (from >= to) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "from %lld must be less than to %lld.", (long long)from,
                                (long long)to);
            return ACLNN_ERR_PARAM_INVALID;
        }
        prm->from = from;
        prm->range = (uint64_t)to - (uint64_t)from;
        k = 3;
    } else {
        int digits = dt == ACL_FLOAT16 ? 11 : dt == ACL_BF16 ? 8 : dt == ACL_FLOAT ? 24 : dt == ACL_DOUBLE ? 53 : 0;
        if (digits) prm->range = ((uint64_t)1 << digits) + 1;
        else if (dt == ACL_BOOL) prm->range = 2;
        else prm->range = (uint64_t)1 << (8 * ew_itemsize(dt) - (dt == ACL_UINT8 ? 0 : 1));   /* max + 1 */
    }
    prm->seed = (uint64_t)op_argument(c, s, k)->i;
    prm->offset = (uint64_t)op_argument(c, s, k + 1)->i;
    return ACLNN_SUCCESS;
}

/* ---- InplaceBernoulli, InplaceBernoulliTensor --------------------------------------------------------- */

static void bernoulli_one(void *ctx, uint64_t i, unsigned char *at) {
    const smp_ctx *x = ctx;
    uint32_t w[4];
    rnd_philox(x->p->seed, x->p->offset, i, w);
    ew_store(at, x->dtype, ew_cast((ew_value){0, rnd_u24(w[0]) < (float)x->p->prob}, ACL_BOOL, x->dtype));
}

void bernoulli_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!out_in_device(launch, self)) return;
    const smp_params *p = launch->params;
    if (launch->n_inputs == 0) {
        smp_ctx x = {p, self->dtype};
        rnd_for_each(self, bernoulli_one, &x);
        return;
    }
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *prob = &launch->inputs[0];
    tv_bcast2 it;
    int64_t n = tv_bcast2_init(&it, self, prob, self->shape, self->ndim);
    for (int64_t i = 0; i < n; i++, tv_bcast2_next(&it)) {
        uint32_t w[4];
        rnd_philox(p->seed, p->offset, (uint64_t)i, w);
        ew_value pv = ew_load(tv_at(prob, it.off[1]), prob->dtype);
        float pr = (float)(ew_repr_of(prob->dtype) == EW_REPR_F ? pv.f : (double)pv.i);
        ew_store(tv_at(self, it.off[0]), self->dtype, ew_cast((ew_value){0, rnd_u24(w[0]) < pr}, ACL_BOOL, self->dtype));
    }
}

/* bernoulli_plan selfRef prob seed offset: a scalar prob in [0, 1] ("prob should be in range 0<=prob<=1 ."). */
aclnnStatus opc_bernoulli_plan(op_call *c, const op_step *s) {
    smp_params *prm = op_params(c, sizeof *prm);
    if (c->def->params[s->p[1]].kind == OP_K_SCALAR) {
        const op_scalar *sc = op_scalar_of(c, s, 1);
        prm->prob = ew_repr_of(sc->dtype) == EW_REPR_F ? sc->v.f : (double)sc->v.i;
        if (prm->prob > 1 || prm->prob < 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "prob should be in range 0<=prob<=1 .");
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    prm->seed = (uint64_t)op_argument(c, s, 2)->i;
    prm->offset = (uint64_t)op_argument(c, s, 3)->i;
    return ACLNN_SUCCESS;
}

/* ---- Randperm ----------------------------------------------------------------------------------------- */

/* A sort key and its index: ordered by key, then by index (Randperm's r64, Multinomial's race times as the
 * bits of non-negative doubles, whose order is the numbers'). */
typedef struct {
    uint64_t key;
    int64_t i;
} smp_key;

static int key_cmp(const void *pa, const void *pb) {
    const smp_key *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

void randperm_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    const smp_params *p = launch->params;
    smp_key *keys = tv_alloc(p->n, sizeof *keys);
    if (keys == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < p->n; i++) keys[i] = (smp_key){r64(p, (uint64_t)i), i};
    qsort(keys, (size_t)p->n, sizeof *keys, key_cmp);
    tv_iter it;
    tv_iter_init(&it, out);
    for (int64_t i = 0; i < p->n; i++, tv_iter_next(&it))
        ew_store(tv_at(out, it.off), out->dtype, ew_cast((ew_value){0, keys[i].i}, ACL_INT64, out->dtype));
    free(keys);
}

/* randperm_plan n seed offset out: out of shape [n] (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE), n >= 0
 * (161002 without a message, as the vendor). */
aclnnStatus opc_randperm_plan(op_call *c, const op_step *s) {
    int64_t n = op_argument(c, s, 0)->i;
    aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, 3), op_tensor(c, s, 3), &n, 1);
    if (rc) return rc;
    if (n < 0) return ACLNN_ERR_PARAM_INVALID;
    smp_params *prm = op_params(c, sizeof *prm);
    prm->n = n;
    prm->seed = (uint64_t)op_argument(c, s, 1)->i;
    prm->offset = (uint64_t)op_argument(c, s, 2)->i;
    if (n == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- Multinomial -------------------------------------------------------------------------------------- */

/* The bits of a non-negative double (+0.0 for -0.0), ordered as the numbers. */
static uint64_t race_key(double e) {
    uint64_t k;
    e += 0.0;
    memcpy(&k, &e, sizeof k);
    return k;
}

void multinomial_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const smp_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t n = self->shape[self->ndim - 1], rows = self->ndim == 2 ? self->shape[0] : 1, k = p->samples;
    double *w = tv_load_double(self), *cum = tv_alloc(n, sizeof *cum);
    int64_t *res = tv_alloc(rows * k, sizeof *res);
    smp_key *race = tv_alloc(n, sizeof *race);
    if (!w || !cum || !res || !race) {
        tv_fail_oom(launch);
    } else {
        for (int64_t b = 0; b < rows; b++) {
            const double *row = w + b * n;
            if (p->replacement) {
                double acc = 0.0;
                for (int64_t j = 0; j < n; j++) cum[j] = acc += row[j] > 0 ? row[j] : 0.0;
                for (int64_t s = 0; s < k; s++) {
                    double target = u53(p, (uint64_t)(b * k + s)) * acc;
                    int64_t j = 0;
                    while (j < n - 1 && !(row[j] > 0 && cum[j] > target)) j++;
                    res[b * k + s] = j;
                }
            } else {
                for (int64_t j = 0; j < n; j++) {
                    double u = u53(p, (uint64_t)(b * n + j)) + 0x1p-53;
                    race[j] = (smp_key){race_key(row[j] > 0 ? -log(u) / row[j] : INFINITY), j};
                }
                qsort(race, (size_t)n, sizeof *race, key_cmp);
                for (int64_t s = 0; s < k; s++) res[b * k + s] = race[s].i;
            }
        }
        tv_iter it;
        tv_iter_init(&it, out);
        for (int64_t e = 0; e < rows * k; e++, tv_iter_next(&it))
            ew_store(tv_at(out, it.off), out->dtype, (ew_value){0, res[e]});
    }
    free(w), free(cum), free(res), free(race);
}

/* multinomial_plan self numsamples replacement seed offset out: the op_api's shape and value checks, in its
 * order and words. */
aclnnStatus opc_multinomial_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 5);
    int64_t k = op_argument(c, s, 1)->i;
    int replacement = op_argument(c, s, 2)->i != 0;
    const char *bad = NULL;
    if (self->ndim != 1 && self->ndim != 2) bad = "Dim of self only can be 1 or 2.";
    else if (self->ndim != out->ndim) bad = "Dim of self should be equal to dim of out.";
    if (bad != NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", bad);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (out->shape[out->ndim - 1] != k) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "excepted the size of out at last dim must be equal with "
                            "numsamples %lld, but got %lld.", (long long)k, (long long)out->shape[out->ndim - 1]);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (self->ndim != 1 && self->shape[0] != out->shape[0]) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "excepted the size of out at first dim %lld must be equal "
                            "with the size of self at first dim %lld when dimNum > 1", (long long)self->shape[0],
                            (long long)out->shape[0]);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t n = self->shape[self->ndim - 1];
    if (k <= 0) bad = "Numsamples must > 0.";
    else if (!replacement && k > n) bad = "numsamples must <= shape.GetDim(dimNum - 1) without replacement";
    else if (n > (1 << 24)) bad = "number of categories cannot exceed 2^24";
    if (bad != NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", bad);
        return ACLNN_ERR_PARAM_INVALID;
    }
    smp_params *prm = op_params(c, sizeof *prm);
    prm->samples = k;
    prm->replacement = replacement;
    prm->seed = (uint64_t)op_argument(c, s, 3)->i;
    prm->offset = (uint64_t)op_argument(c, s, 4)->i;
    return ACLNN_SUCCESS;
}
