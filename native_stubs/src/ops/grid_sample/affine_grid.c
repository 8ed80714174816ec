/*
 * aclnnAffineGrid: torch's affine_grid_generator (F.affine_grid) on the NPU (hicann/ops-math math/affine_grid; the
 * AI CPU kernel is not published). out[n, (d,) h, w, k] = x * theta[n, k, 0] + y * theta[n, k, 1] (+ z *
 * theta[n, k, 2]) + theta[n, k, last], with x, y, z torch's linspace(-1, 1, W / H / D) (0 for one step), times
 * (n - 1) / n unless alignCorners; float64, rounded once to out's dtype. Definitions: affine_grid.toml.
 */
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, dims;             /* batch; 2 or 3 spatial dims */
    int64_t sp[3];               /* D (1 for 2-D), H, W */
    int align;
} ag_params;

/* torch's _linspace_from_neg_one at step i of n, in float64 */
static double base_coord(int64_t i, int64_t n, int align) {
    if (n <= 1) return 0.0;
    double step = 2.0 / (double)(n - 1);
    double v = i < n / 2 ? -1.0 + step * (double)i : 1.0 - step * (double)(n - 1 - i);
    return align ? v : v * (double)(n - 1) / (double)n;
}

/* inputs: theta; output: out */
void affine_grid_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const ag_params *p = launch->params;
    int64_t k = p->dims, cols = k + 1, pts = p->sp[0] * p->sp[1] * p->sp[2];
    double *th = tv_load_double(&launch->inputs[0]), *ys = tv_alloc(p->n * pts * k, sizeof(double));
    if (th == NULL || ys == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t b = 0, o = 0; b < p->n; b++)
            for (int64_t d = 0; d < p->sp[0]; d++)
                for (int64_t h = 0; h < p->sp[1]; h++)
                    for (int64_t w = 0; w < p->sp[2]; w++) {
                        double base[4] = {base_coord(w, p->sp[2], p->align), base_coord(h, p->sp[1], p->align), 0, 0};
                        if (k == 3) base[2] = base_coord(d, p->sp[0], p->align);
                        base[k] = 1.0;
                        for (int64_t r = 0; r < k; r++, o++) {
                            const double *row = th + (b * k + r) * cols;
                            double acc = 0.0;
                            for (int64_t j = 0; j < cols; j++) acc += base[j] * row[j];
                            ys[o] = acc;
                        }
                    }
        tv_store_double(&launch->outputs[0], ys);
    }
    free(th), free(ys);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* ag_shape theta size out (CheckShape): theta non-empty; size of 4 values with theta [N, 2, 3], out [N, H, W, 2],
 * or of 5 with theta [N, 3, 4], out [N, D, H, W, 3]. */
aclnnStatus opc_ag_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0), *y = op_tensor(c, s, 2);
    const int64_t *sz = c->ints[s->p[1]].v;
    uint64_t n = c->ints[s->p[1]].n;
    if (pyaclnn_stub_numel(t) == 0) return invalid(c, "Expected theta to be not null tensor.");
    if (n != 4 && n != 5) return invalid(c, "AffineGridGenerator needs 4d or 5d size(input).");
    int64_t k = (int64_t)n - 2;
    if (t->ndim != 3 || t->shape[1] != k || t->shape[2] != k + 1 || t->shape[0] != sz[0]) {
        char a[200];
        tv_shape_text(t->shape, t->ndim, a, sizeof a);
        if (n == 4)
            return invalid(c, "Expected a batch of 2D affine matrices of shape Nx2x3 for size [%lld, %lld, %lld, %lld]. "
                           "Got %s.", (long long)sz[0], (long long)sz[1], (long long)sz[2], (long long)sz[3], a);
        return invalid(c, "Expected a batch of 3D affine matrices of shape Nx3x4 for size [%lld, %lld, %lld, %lld, "
                       "%lld]. Got %s.", (long long)sz[0], (long long)sz[1], (long long)sz[2], (long long)sz[3],
                       (long long)sz[4], a);
    }
    int64_t want[5], nd = 0;
    want[nd++] = sz[0];
    for (uint64_t i = 2; i < n; i++) want[nd++] = sz[i];
    want[nd++] = k;
    return op_expected_size(c->api, op_pname(c, s, 2), y, want, nd);
}

/* ag_plan theta size alignCorners: the geometry; nothing when the grid is empty. */
aclnnStatus opc_ag_plan(op_call *c, const op_step *s) {
    const int64_t *sz = c->ints[s->p[1]].v;
    int five = c->ints[s->p[1]].n == 5;
    ag_params *p = op_params(c, sizeof(ag_params));
    p->n = sz[0], p->dims = five ? 3 : 2;
    p->sp[0] = five ? sz[2] : 1, p->sp[1] = sz[five ? 3 : 2], p->sp[2] = sz[five ? 4 : 3];
    p->align = op_argument(c, s, 2)->i != 0;
    if (p->n * p->sp[0] * p->sp[1] * p->sp[2] == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
