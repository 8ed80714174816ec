/*
 * GLU (glu.toml): aclnnGlu and aclnnGluBackward (hicann/ops-nn activation/glu, glu_grad). self is split in
 * halves a, b along dim (viewed as [outer, 2 * half, inner]); the arch35 kernels' steps, in fp32 for fp16 /
 * bf16 / fp32 (Exp: libm in double rounded to fp32, the emulator's vecmath model), one RINT rounding to the
 * dtype at the end:
 *   forward:  sig = 1 / (Exp(b * -1) + 1); out = sig * a
 *   backward: gradA = gradOut * sig; gradB = (((1 - sig) * sig) * a) * gradOut
 * DOUBLE forward runs the vendor's SplitV / Sigmoid / Mul composition: the same formula in double. The
 * backward on Atlas A2, and for DOUBLE, is the op_api's composition of L0 operators, each result rounded to
 * its dtype (fp16 widened to fp32 first, bf16 / fp32 / double in their own): sig = Sigmoid(b) (the fp32 steps
 * above), gradA = gradOut * sig, gradB = (a - a * sig) * gradA.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int backward, composed;       /* composed: the backward's L0 composition (Atlas A2, DOUBLE) */
    int64_t outer, half, inner;   /* self viewed as [outer, 2 * half, inner] */
} glu_plan;

/* sigmoid(b) as the kernel computes it (fp32 steps, or double). */
static double glu_sig(double b, int dbl) {
    if (dbl) return 1.0 / (exp(-b) + 1.0);
    return (double)(1.0f / (vm_exp((float)b * -1.0f) + 1.0f));
}

/* v (fp32 steps, or double) rounded to dt. */
static double glu_round(double v, aclDataType dt) {
    return ew_value_to_double(ew_cast((ew_value){.f = v}, ACL_DOUBLE, dt), dt);
}

void glu_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const glu_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    aclDataType dt = self->dtype;
    int dbl = dt == ACL_DOUBLE;
    double *x = tv_load_double(self), *g = p->backward ? tv_load_double(&launch->inputs[1]) : NULL;
    double *r = tv_alloc(pyaclnn_stub_numel(out), sizeof(double));
    if (x == NULL || r == NULL || (p->backward && g == NULL)) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t h = 0; h < p->half * p->inner; h++) {
            int64_t ia = o * 2 * p->half * p->inner + h, ib = ia + p->half * p->inner, ih = o * p->half * p->inner + h;
            double a = x[ia], sig = glu_sig(x[ib], dbl);
            if (!p->backward) {
                r[ih] = glu_round(dbl ? sig * a : (double)((float)sig * (float)a), dt);
                continue;
            }
            double gr = g[ih];
            if (p->composed) {   /* each L0 operator's result in ct */
                aclDataType ct = dt == ACL_FLOAT16 ? ACL_FLOAT : dt;
                double sg = glu_round(sig, ct), ga = glu_round(gr * sg, ct);
                double sub = glu_round(a - glu_round(a * sg, ct), ct);
                r[ia] = glu_round(ga, dt);
                r[ib] = glu_round(glu_round(sub * ga, ct), dt);
            } else {
                float sf = (float)sig;
                r[ia] = glu_round((double)((float)gr * sf), dt);
                r[ib] = glu_round((double)((((1.0f - sf) * sf) * (float)a) * (float)gr), dt);
            }
        }
    }
    tv_store_double(out, r);
done:
    free(x);
    free(g);
    free(r);
}

/* glu_plan self dim other "fwd" | "bwd": dim in range, self's dim even, other (out; gradOut for the backward)
 * of self's shape with dim halved -- the vendor's messages of each op_api; the kernel's plan. */
aclnnStatus opc_glu_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *other = op_tensor(c, s, 2);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim;
    int bwd = strcmp(s->text, "bwd") == 0;
    if (dim < -rank || dim >= rank)
        return op_invalidf(c->api, "%s out of range (expected to be in range of [%lld, %lld], but got %lld).",
                           bwd ? "Dimension" : "Input dimension", (long long)-rank, (long long)(rank - 1), (long long)dim);
    int64_t d = dim < 0 ? dim + rank : dim;
    if (self->shape[d] % 2 != 0)
        return op_invalidf(c->api, "%s dimension must be even, but dimension %lld is size %lld.",
                           bwd ? "Halving" : "Split", (long long)dim, (long long)self->shape[d]);
    int64_t want[PYACLNN_STUB_MAX_DIMS];
    memcpy(want, self->shape, sizeof want);
    want[d] /= 2;
    int same = other->ndim == rank;
    for (int64_t k = 0; same && k < rank; k++) same = other->shape[k] == want[k];
    char a[200], b[200];
    if (!same)
        return op_invalidf(c->api, "The shape of %s must be %s, but %s %s.", op_pname(c, s, 2),
                           tv_shape_text(want, rank, a, sizeof a), bwd ? "got" : "get",
                           tv_shape_text(other->shape, other->ndim, b, sizeof b));
    glu_plan *p = op_params(c, sizeof *p);
    p->backward = bwd;
    p->composed = bwd && (!ew_soc_is_950() || self->dtype == ACL_DOUBLE);
    p->outer = tv_dims_product(self->shape, 0, d);
    p->half = want[d];
    p->inner = tv_dims_product(self->shape, d + 1, rank);
    return ACLNN_SUCCESS;
}
