/*
 * aclnnAvgPool3d and aclnnAvgPool3dBackward: torch's avg_pool3d (F.avg_pool3d, nn.AvgPool3d) on the NPU
 * (hicann/ops-nn pooling/avg_pool3_d, avg_pool3_d_grad op_api). self is [N, C, D, H, W] or [C, D, H, W];
 * kernelSize / padding of 1 or 3 values, stride of 0 (= kernel), 1 or 3. Output size per axis
 * (in + 2 pad - k + (ceil ? s - 1 : 0)) / s + 1 (ceil mode drops a window starting in the padding). A window
 * starts at o * s - pad and ends at min(start + k, in + pad); its divisor is divisorOverride when nonzero, else its
 * padded size (countIncludePad) or its elements inside the input. Forward: the window's sum in float64 / divisor,
 * one rounding; backward: gradOutput / divisor added to every element of the window in float64, one rounding.
 * Definitions: avg_pool3d.toml.
 */
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops/pool/pool.h"
#include "ops_decls.h"

typedef struct {
    int64_t k[3], s[3], p[3];
    int64_t planes, in[3], out[3];   /* D, H, W */
    int cip;
    int64_t divisor;
} ap3_params;

/* window of output index o on axis a: [*lo, *hi) inside the input; its padded extent */
static int64_t span(const ap3_params *p, int a, int64_t o, int64_t *lo, int64_t *hi) {
    int64_t st = o * p->s[a] - p->p[a], en = st + p->k[a] < p->in[a] + p->p[a] ? st + p->k[a] : p->in[a] + p->p[a];
    *lo = st > 0 ? st : 0;
    *hi = en < p->in[a] ? en : p->in[a];
    return en - st;
}

static void run(const pyaclnn_stub_launch *launch, int back) {
    if (!tv_launch_views_ok(launch)) return;
    const ap3_params *p = launch->params;
    int64_t isp = p->in[0] * p->in[1] * p->in[2], osp = p->out[0] * p->out[1] * p->out[2];
    double *src = tv_load_double(&launch->inputs[0]);
    double *dst = calloc((size_t)(p->planes * (back ? isp : osp)) + 1, sizeof(double));
    if (src == NULL || dst == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t pl = 0; pl < p->planes; pl++)
            for (int64_t o = 0; o < osp; o++) {
                int64_t lo[3], hi[3], padded = 1, inside = 1;
                int64_t idx[3] = {o / (p->out[1] * p->out[2]), o / p->out[2] % p->out[1], o % p->out[2]};
                for (int a = 0; a < 3; a++) {
                    padded *= span(p, a, idx[a], &lo[a], &hi[a]);
                    inside *= hi[a] - lo[a] > 0 ? hi[a] - lo[a] : 0;
                }
                double div = (double)(p->divisor ? p->divisor : p->cip ? padded : inside), sum = 0;
                double g = back ? src[pl * osp + o] / div : 0;
                for (int64_t d = lo[0]; d < hi[0]; d++)
                    for (int64_t h = lo[1]; h < hi[1]; h++)
                        for (int64_t w = lo[2]; w < hi[2]; w++) {
                            int64_t at = pl * isp + (d * p->in[1] + h) * p->in[2] + w;
                            if (back) dst[at] += g;
                            else sum += src[at];
                        }
                if (!back) dst[pl * osp + o] = sum / div;
            }
        tv_store_double(&launch->outputs[0], dst);
    }
    free(src), free(dst);
}

void avg_pool3d_kernel(const pyaclnn_stub_launch *launch) { run(launch, 0); }
void avg_pool3d_backward_kernel(const pyaclnn_stub_launch *launch) { run(launch, 1); }

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)
#define INTS(c, s, k) ((c)->ints[(s)->p[k]])

/* the attributes filled to 3 values (kernel / padding: 1 -> all; stride: 0 -> kernel, 1 -> all) */
static void fill(op_call *c, const op_step *s, int kk, int64_t k[3], int64_t st[3], int64_t pd[3]) {
    const int64_t *kv = INTS(c, s, kk).v, *sv = INTS(c, s, kk + 1).v, *pv = INTS(c, s, kk + 2).v;
    uint64_t ns = INTS(c, s, kk + 1).n, np = INTS(c, s, kk + 2).n, nk = INTS(c, s, kk).n;
    for (int a = 0; a < 3; a++) {
        k[a] = nk == 1 ? kv[0] : kv[a];
        st[a] = ns == 0 ? k[a] : ns == 1 ? sv[0] : sv[a];
        pd[a] = np == 1 ? pv[0] : pv[a];
    }
}

static int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int ceil_mode) {
    if (s == 0) return -1;
    int64_t o = (in + pad * 2 - k + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (o - 1) * s >= in + pad) o--;
    return o;
}

/* the expected pooled shape of self (4-D or 5-D) into want; 161002 when a size is negative (`what` names it) */
static aclnnStatus pooled(op_call *c, const pyaclnn_stub_tensor *x, const int64_t *k, const int64_t *st,
                          const int64_t *pd, int ceil_mode, const char *what, int64_t *want) {
    int is4 = x->ndim == 4;
    const int64_t *sp = x->shape + x->ndim - 3;
    int64_t o[3];
    for (int a = 0; a < 3; a++) o[a] = out_size(sp[a], k[a], pd[a], st[a], ceil_mode);
    int64_t ch = x->shape[x->ndim - 4];
    if (o[0] < 0 || o[1] < 0 || o[2] < 0)
        return invalid(c, "Given input size [%lld,%lld,%lld,%lld], calc %s size [%lld,%lld,%lld,%lld] dim value should be "
                       "non negative", (long long)ch, (long long)sp[0], (long long)sp[1], (long long)sp[2], what,
                       (long long)ch, (long long)o[0], (long long)o[1], (long long)o[2]);
    int n = 0;
    if (!is4) want[n++] = x->shape[0];
    want[n++] = ch;
    for (int a = 0; a < 3; a++) want[n++] = o[a];
    return ACLNN_SUCCESS;
}

static void plan(op_call *c, const pyaclnn_stub_tensor *x, const int64_t *k, const int64_t *st, const int64_t *pd,
                 const int64_t *out_shape, int cip, int64_t divisor) {
    ap3_params *p = op_params(c, sizeof(ap3_params));
    p->planes = x->ndim == 4 ? x->shape[0] : x->shape[0] * x->shape[1];
    for (int a = 0; a < 3; a++) {
        p->k[a] = k[a], p->s[a] = st[a], p->p[a] = pd[a];
        p->in[a] = x->shape[x->ndim - 3 + a], p->out[a] = out_shape[x->ndim - 3 + a];
    }
    p->cip = cip, p->divisor = divisor;
}

/* op::IsPrivateFormat: the blocked layouts (the plain ones: ND, NCHW, NHWC, NCL, NCDHW, NDHWC) */
static int is_private(aclFormat f) {
    return !(f == ACL_FORMAT_ND || f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NHWC || f == ACL_FORMAT_NCL ||
             f == ACL_FORMAT_NCDHW || f == ACL_FORMAT_NDHWC);
}

/* ap3_format self out (CheckFormat): one storage format, not a private one. */
aclnnStatus opc_ap3_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    char a[24], b[24];
    if (x->format != y->format)
        return invalid(c, "self and out format should be same. Actual: self is [%s], out is [%s].",
                       op_format_name(x->format, a), op_format_name(y->format, b));
    if (is_private(x->format)) return invalid(c, "Not support format [%s].", op_format_name(x->format, a));
    return ACLNN_SUCCESS;
}

/* ap3_shape self kernelSize stride padding ceilMode out (CheckShape, CheckOutputShape). */
aclnnStatus opc_ap3_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 5);
    if (!((x->ndim == 5 || x->ndim == 4) && x->ndim == y->ndim))
        return invalid(c, "self and out must maintain same format, support 4D or 5D.");
    uint64_t nk = INTS(c, s, 1).n, ns = INTS(c, s, 2).n, np = INTS(c, s, 3).n;
    if (nk != 1 && nk != 3) return invalid(c, "Expected length of kernel is 1 or 3, but got %llu.", (unsigned long long)nk);
    if (np != 1 && np != 3) return invalid(c, "Expected length of padding is 1 or 3, but got %llu.", (unsigned long long)np);
    if (ns != 0 && ns != 1 && ns != 3)
        return invalid(c, "Expected length of stride is 0 or 1 or 3, but got: %llu.", (unsigned long long)ns);
    int64_t k[3], st[3], pd[3], want[5];
    fill(c, s, 1, k, st, pd);
    for (int a = 0; a < 3; a++) {
        int64_t in = x->shape[x->ndim - 3 + a];
        if (k[a] <= 0 || k[a] > in) return invalid(c, "kernel value(%lld) is invaild, must be (0, %lld].", (long long)k[a], (long long)in);
        if (st[a] <= 0) return invalid(c, "stride value(%lld) is less than or equal to 0.", (long long)st[a]);
        if (!(pd[a] >= 0 && pd[a] <= k[a] / 2))
            return invalid(c, "padding value(%lld) is invaild, must be [0, kernel/2].", (long long)pd[a]);
    }
    aclnnStatus rc = pooled(c, x, k, st, pd, (int)op_argument(c, s, 4)->i, "out", want);
    if (rc) return rc;
    return op_expected_size(c->api, op_pname(c, s, 5), y, want, x->ndim);
}

/* ap3_plan self kernelSize stride padding countIncludePad divisorOverride out: nothing for an empty self or out. */
aclnnStatus opc_ap3_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 6);
    if (pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(y) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    int64_t k[3], st[3], pd[3];
    fill(c, s, 1, k, st, pd);
    plan(c, x, k, st, pd, y->shape, op_argument(c, s, 4)->i != 0, op_argument(c, s, 5)->i);
    return ACLNN_SUCCESS;
}

/* ap3b_dims gradOutput self kernelSize stride padding output (CheckDimVlid). */
aclnnStatus opc_ap3b_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *y = op_tensor(c, s, 5);
    if (g->ndim != 4 && g->ndim != 5) return invalid(c, "grad dim [%lld] should be 4 or 5", (long long)g->ndim);
    if (x->ndim != g->ndim || x->ndim != y->ndim)
        return invalid(c, "self dim num [%lld] should be equal to grad dim num [%lld] and out dim num [%lld]",
                       (long long)x->ndim, (long long)g->ndim, (long long)y->ndim);
    for (int64_t i = 0; i < x->ndim; i++)
        if (x->shape[i] != y->shape[i])
            return invalid(c, "self dim [%lld] is [%lld] should be equal to out dim [%lld]", (long long)i,
                           (long long)x->shape[i], (long long)y->shape[i]);
    uint64_t nk = INTS(c, s, 2).n, ns = INTS(c, s, 3).n, np = INTS(c, s, 4).n;
    if (nk != 1 && nk != 3) return invalid(c, "kernel size [%llu] must be 1 or 3", (unsigned long long)nk);
    if (np != 1 && np != 3) return invalid(c, "padding size [%llu] must be 1 or 3", (unsigned long long)np);
    if (ns != 0 && ns != 1 && ns != 3) return invalid(c, "stride size [%llu] must be 0 or 1 or 3", (unsigned long long)ns);
    return ACLNN_SUCCESS;
}

/* ap3b_format gradOutput output (CheckFormat). */
aclnnStatus opc_ap3b_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    aclnnStatus st = pool_same_format(c, g, y);
    if (st != ACLNN_SUCCESS) return st;
    if (is_private(g->format)) return invalid(c, "Format only don't support private format.");
    return ACLNN_SUCCESS;
}

/* ap3b_plan gradOutput self kernelSize stride padding ceilMode countIncludePad divisorOverride: nothing for an
 * empty gradOutput; the attributes' values (CheckArrayDataAvgPoolBackWard), gradOutput's pooled shape, the plan. */
aclnnStatus opc_ap3b_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *x = op_tensor(c, s, 1);
    if (pyaclnn_stub_numel(g) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    int64_t k[3], st[3], pd[3], want[5];
    fill(c, s, 2, k, st, pd);
    for (int a = 0; a < 3; a++)
        if (k[a] <= 0) return invalid(c, "kernelSize [%d] data [%lld] is less than or equal to 0.", a, (long long)k[a]);
    for (int a = 0; a < 3; a++)
        if (st[a] <= 0) return invalid(c, "stride [%d] data [%lld] is less than or equal to 0.", a, (long long)st[a]);
    for (int a = 0; a < 3; a++) {
        if (k[a] / 2 < pd[a])
            return invalid(c, "padding [%d] data [%lld] should less than kernelSize / 2 [%lld].", a, (long long)pd[a],
                           (long long)(k[a] / 2));
        if (pd[a] < 0) return invalid(c, "padding [%d] data [%lld] is less than 0.", a, (long long)pd[a]);
    }
    aclnnStatus rc = pooled(c, x, k, st, pd, (int)op_argument(c, s, 5)->i, "gradOutput", want);
    if (rc) return rc;
    if ((rc = op_expected_size(c->api, op_pname(c, s, 0), g, want, x->ndim)) != ACLNN_SUCCESS) return rc;
    plan(c, x, k, st, pd, g->shape, op_argument(c, s, 6)->i != 0, op_argument(c, s, 7)->i);
    return ACLNN_SUCCESS;
}
