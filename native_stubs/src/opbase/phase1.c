/*
 * op_phase1: runs an operator's definition (opbase.h) -- its steps in order, then the executor.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opbase/checks.h"
#include "opbase/opbase.h"

void *op_params(op_call *c, size_t size) {
    /* a programming error of a family (its parameter block outgrew OP_PARAMS_MAX): caught by its tests */
    if (size > sizeof c->params) return NULL;
    memset(c->params, 0, size);
    c->params_size = size;
    return c->params;
}

void *op_scratch(op_call *c, size_t size) {
    if (c->n_scratch >= OP_MAX_SCRATCH) return NULL;
    void *p = calloc(1, size ? size : 1);
    if (p != NULL) c->scratch[c->n_scratch++] = p;
    return p;
}

int op_param_index(const op_def *def, const char *name) {
    for (int i = 0; i < def->n_params; i++)
        if (strcmp(def->params[i].name, name) == 0) return i;
    return -1;
}

/* The handle and snapshot the executor gets for tensor parameter i: phase 1's snapshot when a step read
 * it (absent: an optional NULL, or an output the call leaves out, e.g. by an outputMask), else one
 * taken now; absent for a slot no parameter fills (i = -1). */
static aclnnStatus io_tensor(const op_call *c, int i, const aclTensor **handle, pyaclnn_stub_tensor *snap) {
    if (i < 0) {
        *handle = NULL;
        memset(snap, 0, sizeof *snap);
        return ACLNN_SUCCESS;
    }
    *handle = c->arg[i].p;
    if (c->read >> i & 1u) {
        *snap = c->t[i];
        if (!snap->present) *handle = NULL;
        return ACLNN_SUCCESS;
    }
    return pyaclnn_stub_tensor_get(*handle, snap);
}

/* Snapshots of step-given handles that came without theirs (read once, here). */
static aclnnStatus snapshots_of(op_call *c, const aclTensor *const *h, size_t n, const pyaclnn_stub_tensor **out) {
    pyaclnn_stub_tensor *t = op_scratch(c, sizeof *t * (n ? n : 1));
    if (t == NULL) return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    for (size_t k = 0; k < n; k++)
        if (pyaclnn_stub_tensor_get(h[k], &t[k]) != ACLNN_SUCCESS) return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    *out = t;
    return ACLNN_SUCCESS;
}

/* Test hook (tests/c/op_redescribe_race.c): a pause between the steps and the executor, so that a test can
 * re-describe a tensor inside that window on purpose. 0 (no pause) unless a test sets it. */
static _Atomic unsigned phase1_pause_us;

PYACLNN_STUB_API void pyaclnn_stub_phase1_test_pause(unsigned microseconds) { atomic_store(&phase1_pause_us, microseconds); }

aclnnStatus op_make_executor(op_call *c, int with_tensors) {
    unsigned pause = atomic_load_explicit(&phase1_pause_us, memory_order_relaxed);
    if (pause) nanosleep(&(struct timespec){pause / 1000000u, (long)(pause % 1000000u) * 1000}, NULL);
    const op_def *d = c->def;
    const aclTensor *ins[OP_MAX_IO], *outs[OP_MAX_IO];
    pyaclnn_stub_tensor in_t[OP_MAX_IO], out_t[OP_MAX_IO];
    const aclTensor *const *in = c->in_handles, *const *out = c->out_handles;
    const pyaclnn_stub_tensor *in_s = c->in_snaps, *out_s = c->out_snaps;
    size_t n_in = c->n_in, n_out = c->n_out;
    aclnnStatus rc = ACLNN_SUCCESS;
    if (in == NULL) {
        for (size_t k = 0; k < d->n_inputs && rc == ACLNN_SUCCESS; k++) rc = io_tensor(c, d->inputs[k], &ins[k], &in_t[k]);
        in = ins;
        in_s = in_t;
        n_in = d->n_inputs;
    } else if (in_s == NULL) {
        rc = snapshots_of(c, in, n_in, &in_s);
    }
    if (out == NULL) {
        for (size_t k = 0; k < d->n_outputs && rc == ACLNN_SUCCESS; k++)
            rc = io_tensor(c, d->outputs[k], &outs[k], &out_t[k]);
        out = outs;
        out_s = out_t;
        n_out = d->n_outputs;
    } else if (out_s == NULL && rc == ACLNN_SUCCESS) {
        rc = snapshots_of(c, out, n_out, &out_s);
    }
    if (!with_tensors) n_in = n_out = 0;
    aclOpExecutor *e = NULL;
    if (rc == ACLNN_SUCCESS)
        e = pyaclnn_stub_executor_new_snapshots(op_exec_name(c), c->nothing ? NULL : c->kernel, c->params,
                                                c->params_size, in_s, n_in, out_s, n_out, c->workspace);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    if (c->shape_output >= 0 && !c->nothing && with_tensors &&
        pyaclnn_stub_executor_set_out_shape(e, (size_t)c->shape_output, (aclTensor *)out[c->shape_output]) != 0) {
        aclDestroyAclOpExecutor(e);
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    c->made = e;
    return ACLNN_SUCCESS;
}

static aclnnStatus run(op_call *c) {
    const op_def *def = c->def;
    for (size_t i = 0; i < def->n_steps; i++) {
        aclnnStatus rc = def->steps[i].fn(c, &def->steps[i]);
        if (rc != ACLNN_SUCCESS) {
            if (c->made != NULL) aclDestroyAclOpExecutor(c->made);
            return rc;
        }
        if (c->done) break;
    }
    if (c->workspace_size == NULL || c->executor == NULL) {
        /* (a definition whose null checks leave the trailing pair to the vendor's later code: never write
         * through a NULL one) */
        if (c->made != NULL) aclDestroyAclOpExecutor(c->made);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL",
                            c->workspace_size == NULL ? "workspaceSize" : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (c->made == NULL) {
        aclnnStatus rc = op_make_executor(c, 1);
        if (rc != ACLNN_SUCCESS) return rc;
    }
    *c->workspace_size = c->workspace;
    *c->executor = c->made;
    return ACLNN_SUCCESS;
}

aclnnStatus op_phase1(const op_def *def, const op_arg *args, uint64_t *workspaceSize, aclOpExecutor **executor) {
    op_call c;
    /* Only the header is initialised: snapshots and the parameter block are written before they are read. */
    memset(&c, 0, offsetof(op_call, t));
    c.def = def;
    c.api = def->api;
    c.arg = args;
    c.workspace_size = workspaceSize;
    c.executor = executor;
    c.ndim = -1;
    c.compute = ACL_DT_UNDEFINED;
    c.kernel = def->kernel;
    c.nothing = 0;
    c.done = 0;
    c.workspace = 0;
    c.params_size = 0;
    c.in_handles = c.out_handles = NULL;
    c.in_snaps = c.out_snaps = NULL;
    c.n_in = c.n_out = 0;
    c.made = NULL;
    c.shape_output = -1;
    c.n_scratch = 0;
    aclnnStatus rc = run(&c);
    for (uint8_t k = 0; k < c.n_scratch; k++) free(c.scratch[k]);
    /* torch_npu's executor cache keeps a copy if it announced this call; a failed phase 1 (NULL) ends the
     * announcement too, so a later phase 1 on this thread is never filed under this call's key */
    pyaclnn_stub_pta_offer(def->api, rc == ACLNN_SUCCESS ? c.made : NULL);
    return rc;
}
