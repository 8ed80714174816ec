/*
 * aclOpExecutor: built by an operator's phase 1, run by its phase 2 on a stream.
 *
 * An executor is one malloc()ed block: a ready-to-run pyaclnn_stub_launch header followed by the
 * tensor snapshots (inputs, then outputs) and a copy of the operator's parameters. The kernel only
 * ever sees such a block, never an aclTensor, so tensors may be destroyed right after phase 2.
 *
 *  - Single-use executor: phase 2 unregisters it (it is consumed whether or not the launch
 *    succeeds) and hands the block itself to the stream; the stream frees it after the kernel ran.
 *    No allocation at launch time.
 *  - Repeatable executor: phase 2 clones the block (the only allocation of a launch) and queues the
 *    clone, so the executor can be re-pointed and relaunched before earlier launches have run.
 *
 * Tensor-list parameters (the aclSetDynamic*TensorAddr index space) are counted in the block but
 * none of our operators has one yet, so those setters always find the index out of range.
 *
 * Threads: executor_mu makes "is it live, is it single-use, consume or clone it" one step, so when
 * two threads launch one single-use executor exactly one gets it and the other is refused (nothing
 * reads a block another thread's launch may have freed), and destroy/re-point calls cannot free or
 * change a block while a launch copies it. A queued launch pins the memory its tensors and its
 * workspace live in (pyaclnn_stub_mem_pin), so an aclrtFree racing it cannot release that memory
 * before the kernel has run.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel_times.h"
#include "nnopbase_internal.h"

struct aclOpExecutor {
    pyaclnn_stub_launch launch;       /* what the kernel gets; its pointers point into this block */
    pyaclnn_stub_kernel_fn kernel;    /* NULL: a launch with nothing to do (empty tensors)         */
    size_t block_size;                /* bytes of the whole block, for cloning                      */
    size_t params_offset;
    size_t pins_offset;               /* n_inputs + n_outputs + 1 pins (tensors, then workspace)    */
    uint64_t workspace_required;      /* what phase 1 reported                                      */
    int repeatable;
    size_t n_input_lists, n_output_lists;   /* tensor-list parameters (none yet)                  */
    aclnnStatus deferred_code;        /* non-zero: phase 2 refuses with this code and message       */
    char deferred_msg[240];
    aclTensor *shape_target;          /* data-dependent output shape: the tensor phase 2 refreshes  */
    size_t shape_output;              /* ... and the index of that output                           */
    pyaclnn_stub_tensor tensors[];    /* n_inputs + n_outputs snapshots, then the parameters        */
};

pthread_mutex_t executor_mu = PTHREAD_MUTEX_INITIALIZER;

static void **pins_of(aclOpExecutor *e) { return (void **)((unsigned char *)e + e->pins_offset); }
static size_t n_pins(const aclOpExecutor *e) { return e->launch.n_inputs + e->launch.n_outputs + 1; }

/* Points the launch header of a block at the block's own trailing storage. */
static void bind_launch(aclOpExecutor *e) {
    e->launch.inputs = e->tensors;
    e->launch.outputs = e->tensors + e->launch.n_inputs;
    e->launch.params = (const unsigned char *)e + e->params_offset;
}

/* An unregistered executor block with room for n_inputs + n_outputs snapshots (left zero: absent). */
static aclOpExecutor *executor_alloc(const char *op_name, pyaclnn_stub_kernel_fn kernel, const void *params,
                                     size_t params_size, size_t n_inputs, size_t n_outputs, uint64_t workspace_size) {
    size_t n_tensors = n_inputs + n_outputs;
    if (n_tensors < n_inputs || n_tensors > (SIZE_MAX / 2) / sizeof(pyaclnn_stub_tensor) ||
        params_size > SIZE_MAX / 2)
        return NULL;
    size_t pins_offset = offsetof(aclOpExecutor, tensors) + n_tensors * sizeof(pyaclnn_stub_tensor);
    pins_offset = (pins_offset + 15) & ~(size_t)15;
    size_t params_offset = pins_offset + (n_tensors + 1) * sizeof(void *);
    params_offset = (params_offset + 15) & ~(size_t)15;
    size_t block_size = params_offset + params_size;
    /* Not calloc: the snapshots (most of the block) are written whole by the callers, so only the header,
     * the pins and the padding around them are zeroed here (a 3-tensor executor is about 2.3 KB). */
    aclOpExecutor *e = malloc(block_size);
    if (e == NULL) return NULL;
    memset(e, 0, offsetof(aclOpExecutor, tensors));
    memset((unsigned char *)e + offsetof(aclOpExecutor, tensors) + n_tensors * sizeof(pyaclnn_stub_tensor), 0,
           params_offset - offsetof(aclOpExecutor, tensors) - n_tensors * sizeof(pyaclnn_stub_tensor));

    e->launch.op_name = op_name;
    e->launch.n_inputs = n_inputs;
    e->launch.n_outputs = n_outputs;
    e->kernel = kernel;
    e->block_size = block_size;
    e->params_offset = params_offset;
    e->pins_offset = pins_offset;
    e->workspace_required = workspace_size;
    bind_launch(e);
    if (params_size) memcpy((unsigned char *)e + params_offset, params, params_size);
    return e;
}

static aclOpExecutor *executor_register(aclOpExecutor *e) {
    if (stub_registry_add(&nn_handles, e, NN_KIND_EXECUTOR) != 0) {
        free(e);
        return NULL;
    }
    return e;
}

aclOpExecutor *pyaclnn_stub_executor_new(const char *op_name, pyaclnn_stub_kernel_fn kernel, const void *params,
                                         size_t params_size, const aclTensor *const *inputs, size_t n_inputs,
                                         const aclTensor *const *outputs, size_t n_outputs,
                                         uint64_t workspace_size) {
    aclOpExecutor *e = executor_alloc(op_name, kernel, params, params_size, n_inputs, n_outputs, workspace_size);
    if (e == NULL) return NULL;
    size_t n_tensors = n_inputs + n_outputs;
    for (size_t i = 0; i < n_tensors; i++) {
        const aclTensor *t = i < n_inputs ? inputs[i] : outputs[i - n_inputs];
        if (t == NULL) memset(&e->tensors[i], 0, sizeof e->tensors[i]);   /* absent: all zero, present = 0 */
        if (pyaclnn_stub_tensor_get(t, &e->tensors[i]) != ACLNN_SUCCESS) {
            /* operators validate their tensors before getting here; this is a programming error */
            pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, op_name, "tensor parameter %zu (%p) is not a live "
                                "aclTensor", i, (const void *)t);
            free(e);
            return NULL;
        }
    }
    return executor_register(e);
}

/* A snapshot an operator may hand over: absent, or present with ranks the view arrays can hold. */
static int snapshot_usable(const pyaclnn_stub_tensor *t) {
    if (t->present == 0) return 1;
    return t->present == 1 && t->ndim >= 0 && t->ndim <= PYACLNN_STUB_MAX_DIMS && t->storage_ndim >= 0 &&
           t->storage_ndim <= PYACLNN_STUB_MAX_DIMS;
}

aclOpExecutor *pyaclnn_stub_executor_new_snapshots(const char *op_name, pyaclnn_stub_kernel_fn kernel,
                                                   const void *params, size_t params_size,
                                                   const pyaclnn_stub_tensor *inputs, size_t n_inputs,
                                                   const pyaclnn_stub_tensor *outputs, size_t n_outputs,
                                                   uint64_t workspace_size) {
    const char *api = op_name ? op_name : "pyaclnn_stub_executor_new_snapshots";
    if ((n_inputs && inputs == NULL) || (n_outputs && outputs == NULL) || (params_size && params == NULL)) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "%s is NULL but its count is not zero",
                            n_inputs && !inputs ? "inputs" : n_outputs && !outputs ? "outputs" : "params");
        return NULL;
    }
    size_t n_tensors = n_inputs + n_outputs;
    for (size_t i = 0; i < n_tensors; i++) {
        const pyaclnn_stub_tensor *t = i < n_inputs ? &inputs[i] : &outputs[i - n_inputs];
        if (!snapshot_usable(t)) {
            /* operators hand over what pyaclnn_stub_tensor_get gave them; this is a programming error */
            pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "tensor snapshot %zu is not a snapshot "
                                "(present %d, ndim %lld, storage_ndim %lld)", i, t->present, (long long)t->ndim,
                                (long long)t->storage_ndim);
            return NULL;
        }
    }
    aclOpExecutor *e = executor_alloc(op_name, kernel, params, params_size, n_inputs, n_outputs, workspace_size);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory for an executor");
        return NULL;
    }
    for (size_t i = 0; i < n_tensors; i++) {
        const pyaclnn_stub_tensor *t = i < n_inputs ? &inputs[i] : &outputs[i - n_inputs];
        if (t->present) e->tensors[i] = *t;
        else memset(&e->tensors[i], 0, sizeof e->tensors[i]);   /* absent: {present = 0}, the rest zero too */
    }
    e = executor_register(e);
    if (e == NULL) pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory for an executor");
    return e;
}

void pyaclnn_stub_executor_defer_error(aclOpExecutor *executor, aclnnStatus code, const char *fmt, ...) {
    if (!nn_is(executor, NN_KIND_EXECUTOR)) return;
    executor->deferred_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(executor->deferred_msg, sizeof executor->deferred_msg, fmt, ap);
    va_end(ap);
}

aclnnStatus pyaclnn_stub_executor_set_out_shape(aclOpExecutor *executor, size_t output_index, aclTensor *target) {
    static const char API[] = "pyaclnn_stub_executor_set_out_shape";
    pthread_mutex_lock(&executor_mu);
    aclnnStatus rc = nn_check_handle(API, "executor", executor, NN_KIND_EXECUTOR, ACLNN_ERR_PARAM_NULLPTR);
    if (rc == ACLNN_SUCCESS) rc = nn_check_handle(API, "target", target, NN_KIND_TENSOR, ACLNN_ERR_PARAM_NULLPTR);
    if (rc == ACLNN_SUCCESS && output_index >= executor->launch.n_outputs) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "output index %zu is out of range (%zu outputs)",
                            output_index, executor->launch.n_outputs);
        rc = ACLNN_ERR_PARAM_INVALID;
    }
    if (rc == ACLNN_SUCCESS) {
        executor->shape_target = target;
        executor->shape_output = output_index;
    }
    pthread_mutex_unlock(&executor_mu);
    return rc;
}

/* ---- phase 2 ------------------------------------------------------------------------------- */

/* The checker's mode: 0 off, 1 report, 2 error (tests may switch it, so it is asked each time). */
static int hazard_mode(void) { return pyaclnn_stub_hazard_mode(); }

/* PYACLNN_STUB_POISON=1 (read once). */
static int poisoning(void) {
    static _Atomic int poison = -1;
    int p = atomic_load(&poison);
    if (p < 0) atomic_store(&poison, p = pyaclnn_stub_poison());
    return p;
}

/* After the launch of an operator with a data-dependent output shape: waits for the stream, then
 * makes the shape its kernel reported the view shape of `target` (if that is still a live tensor;
 * the caller may have destroyed it, which CANN leaves undefined). */
static aclnnStatus refresh_out_shape(aclrtStream stream, aclTensor *target, const pyaclnn_stub_shape *shape) {
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return ACLNN_ERR_RUNTIME_ERROR;   /* reported */
    if (shape->ndim < 0) return ACLNN_SUCCESS;   /* the kernel failed: its fault is what sync returned */
    pthread_mutex_lock(&nn_ownership_lock);
    if (nn_is(target, NN_KIND_TENSOR)) {
        pthread_mutex_t *mu = nn_tensor_lock(target);
        pthread_mutex_lock(mu);
        pyaclnn_stub_tensor *d = &target->desc;
        d->ndim = shape->ndim;
        int64_t stride = 1;
        for (int64_t k = shape->ndim; k-- > 0;) {
            d->shape[k] = shape->dims[k];
            d->strides[k] = stride;
            stride *= shape->dims[k] > 0 ? shape->dims[k] : 1;
        }
        pthread_mutex_unlock(mu);
    }
    pthread_mutex_unlock(&nn_ownership_lock);
    return ACLNN_SUCCESS;
}

static void run_launch(void *arg) {
    aclOpExecutor *block = arg;
    /* PYACLNN_STUB_POISON=1: a kernel must not rely on what its workspace held before */
    if (poisoning() && block->launch.workspace && block->launch.workspace_size)
        memset(block->launch.workspace, 0xFF, (size_t)block->launch.workspace_size);
    if (!nn_kernel_times_on()) {
        block->kernel(&block->launch);
        return;
    }
    struct timespec t0, c0, t1, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    block->kernel(&block->launch);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const pyaclnn_stub_launch *l = &block->launch;
    nn_kernel_times_add(l->op_name, (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec),
                        (int64_t)(c1.tv_sec - c0.tv_sec) * 1000000000 + (c1.tv_nsec - c0.tv_nsec),
                        l->n_outputs ? pyaclnn_stub_numel(&l->outputs[0]) : 0);
}

/* The NPU's private blocked layouts (NC1HWC0, FRACTAL_Z, the FRACTAL_NZ forms, NDC1HWC0, FRACTAL_Z_3D, the C04
 * forms): a kernel reads or writes the whole storage the storage dims describe, padding included, not the view. */
static int private_layout(const pyaclnn_stub_tensor *t) {
    int f = (int)t->format & 0xff;
    return t->storage_ndim > 0 && (f == 3 || f == 4 || f == 12 || f == 13 || f == 29 || f == 32 || f == 33 ||
                                   (f >= 50 && f <= 54));
}

/* Conservative byte extent [*lo, *hi) of the elements a tensor view touches: from its lowest to its
 * highest element (gaps of a strided view included); a private layout's whole storage. 0 if it touches
 * nothing. */
static int tensor_extent(const pyaclnn_stub_tensor *t, uintptr_t *lo, uintptr_t *hi) {
    if (!t->present || t->data == NULL) return 0;
    int64_t first = t->offset, last = t->offset;
    if (private_layout(t)) {
        int64_t n = 1;
        for (int64_t k = 0; k < t->storage_ndim; k++)
            if (t->storage_shape[k] == 0 || __builtin_mul_overflow(n, t->storage_shape[k], &n)) return 0;
        last = t->offset + n - 1;
    } else {
        for (int64_t k = 0; k < t->ndim; k++) {
            if (t->shape[k] == 0) return 0;
            int64_t span = (t->shape[k] - 1) * t->strides[k];
            if (span < 0) first += span;
            else last += span;
        }
    }
    int packed = t->dtype == ACL_INT4 || t->dtype == ACL_FLOAT4_E2M1 || t->dtype == ACL_FLOAT4_E1M2;
    int64_t b0, b1;
    if (packed) {
        b0 = first >= 0 ? first / 2 : -((1 - first) / 2);
        b1 = last / 2 + 1;
    } else {
        int64_t size = (int64_t)nn_scalar_bytes(t->dtype);
        b0 = first * size;
        b1 = (last + 1) * size;
    }
    *lo = (uintptr_t)t->data + (uintptr_t)b0;
    *hi = (uintptr_t)t->data + (uintptr_t)b1;
    return *hi > *lo;
}

/* Queues a launch with the bytes it reads (inputs) and writes (outputs, workspace), for the checker. */
static aclError submit_with_accesses(const char *api, aclOpExecutor *launch, aclrtStream stream,
                                     void (*run)(void *), void (*release)(void *)) {
    size_t n_tensors = launch->launch.n_inputs + launch->launch.n_outputs;
    pyaclnn_stub_access small[16] = {{0}};   /* zeroed: GCC cannot see that only the n filled are read */
    pyaclnn_stub_access *acc = n_tensors + 1 <= 16 ? small : malloc((n_tensors + 1) * sizeof *acc);
    size_t n = 0;
    for (size_t i = 0; acc && i < n_tensors; i++) {
        uintptr_t lo, hi;
        if (tensor_extent(&launch->tensors[i], &lo, &hi))
            acc[n++] = (pyaclnn_stub_access){(const void *)lo, hi - lo, i >= launch->launch.n_inputs};
    }
    if (acc && launch->launch.workspace && launch->launch.workspace_size)
        acc[n++] = (pyaclnn_stub_access){launch->launch.workspace, launch->launch.workspace_size, 1};
    aclError rc = pyaclnn_stub_stream_submit_accesses(api, stream, run, release, launch, launch->launch.op_name,
                                                      acc, acc ? n : 0);
    if (acc != small) free(acc);
    return rc;
}

/* bad-workspace: the checker reports what phase 2 refuses anyway. */
static void note_bad_workspace(const char *api, const aclOpExecutor *e, aclrtStream stream, void *workspace,
                               uint64_t size, const char *fmt, ...) {
    if (!hazard_mode()) return;
    char why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pyaclnn_stub_hazard_note(PYACLNN_HAZARD_BAD_WORKSPACE, api, e->launch.op_name, stream, workspace, size, why);
}

static void unpin_all(aclOpExecutor *block) {
    void **pins = pins_of(block);
    for (size_t i = 0; i < n_pins(block); i++) {
        pyaclnn_stub_mem_unpin(pins[i]);
        pins[i] = NULL;
    }
}

/* The data-dependent output shape a kernel fills. Shared by the queued launch and the phase-2 caller
 * that reads it after its sync; the last of the two frees it, so a task that outlives the caller's
 * wait (its stream destroyed meanwhile, the sync refused) never writes freed or stale memory. */
typedef struct {
    atomic_int refs;
    pyaclnn_stub_shape shape;
} shape_box;

static shape_box *box_of(const pyaclnn_stub_shape *shape) {
    return shape ? (shape_box *)((unsigned char *)shape - offsetof(shape_box, shape)) : NULL;
}

static void box_release(shape_box *box) {
    if (box && atomic_fetch_sub(&box->refs, 1) == 1) free(box);
}

static void free_launch(void *arg) {
    shape_box *box = box_of(((aclOpExecutor *)arg)->launch.out_shape);
    unpin_all(arg);   /* memory freed while this launch was queued is released now */
    free(arg);
    box_release(box);
}

/* Pins the memory of the launch's tensors and workspace. Returns 0, or reports (under api) and
 * returns the status when a tensor or the workspace lives on another device than the stream's. */
static aclnnStatus pin_launch(const char *api, aclOpExecutor *block, void *workspace, int32_t stream_device) {
    void **pins = pins_of(block);
    size_t n_tensors = block->launch.n_inputs + block->launch.n_outputs;
    for (size_t i = 0; i <= n_tensors; i++) {
        const void *p = i < n_tensors ? block->tensors[i].data : workspace;
        if (i < n_tensors && !block->tensors[i].present) continue;
        int32_t device = -1;
        pins[i] = p ? pyaclnn_stub_mem_pin(p, &device) : NULL;
        /* Memory not live at phase 2 (freed, never allocated) stays unpinned: the kernel must not
         * address it even if a new allocation lands at that address meanwhile (it would write that
         * block unpinned, racing its aclrtFree). Unset, it fails the kernel's run-time check (507015). */
        if (!pins[i] && i < n_tensors) block->tensors[i].data = NULL;
        if (pins[i] && device >= 0 && stream_device >= 0 && device != stream_device) {
            const char *what = i < n_tensors ? (i < block->launch.n_inputs ? "input" : "output") : "workspace";
            size_t index = i < block->launch.n_inputs ? i : i - block->launch.n_inputs;
            if (i < n_tensors)
                pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, api, "%s tensor %zu (data %p) is memory of device %d, "
                                    "but the stream belongs to device %d", what, index, p, (int)device,
                                    (int)stream_device);
            else
                pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, api, "workspace %p is memory of device %d, but the "
                                    "stream belongs to device %d", p, (int)device, (int)stream_device);
            unpin_all(block);
            return ACLNN_ERR_RUNTIME_ERROR;
        }
    }
    return ACLNN_SUCCESS;
}

/* Phase-2 workspace check (the emulator's stand-in for the NPU's memory fault): a workspace must be
 * live device memory with at least workspaceSize bytes from the pointer on. */
static aclnnStatus check_workspace(const char *api, void *workspace, uint64_t workspace_size) {
    void *base;
    size_t size;
    if (workspace_size == 0 || workspace == NULL) return ACLNN_SUCCESS;
    if (workspace_size > SIZE_MAX || !pyaclnn_stub_mem_lookup(workspace, (size_t)workspace_size, &base, &size)) {
        if (pyaclnn_stub_mem_lookup(workspace, 1, &base, &size))
            pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, api,
                                "workspace %p has %zu bytes of device memory from there on (allocation %p of %zu "
                                "bytes), fewer than the workspaceSize %llu given", workspace,
                                size - (size_t)((uintptr_t)workspace - (uintptr_t)base), base, size,
                                (unsigned long long)workspace_size);
        else
            pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, api,
                                "workspace %p is not live device memory (never allocated with aclrtMalloc, "
                                "already freed, or host memory)", workspace);
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus pyaclnn_stub_executor_run(const char *api, void *workspace, uint64_t workspace_size,
                                      aclOpExecutor *executor, aclrtStream stream) {
    if (executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "executor is NULL");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (pyaclnn_stub_forked_child()) {   /* before any lock: see runtime/fork.c */
        pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, api, "cannot launch in a forked child process: the runtime "
                            "was started in the parent before fork()");
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    /* Liveness, single-use consumption and the clone of a repeatable block in one step (see top). */
    pthread_mutex_lock(&executor_mu);
    if (!nn_is(executor, NN_KIND_EXECUTOR)) {
        pthread_mutex_unlock(&executor_mu);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "executor %p is not a live aclOpExecutor: a single-use executor is consumed by its "
                            "first run (call aclSetAclOpExecutorRepeatable after phase 1 to run it again), or it "
                            "was destroyed", (void *)executor);
        return ACLNN_ERR_PARAM_INVALID;
    }
    /* From here on a single-use executor is consumed, whatever the outcome (as in opbase). */
    aclOpExecutor *launch = executor;
    int repeatable = executor->repeatable;
    pyaclnn_stub_kernel_fn kernel = executor->kernel;
    if (!repeatable) stub_registry_remove(&nn_handles, executor, NN_KIND_EXECUTOR);

    aclnnStatus rc = ACLNN_SUCCESS;
    if (workspace_size > 0 && workspace == NULL) {
        note_bad_workspace(api, executor, stream, workspace, workspace_size,
                           "workspace is NULL but workspaceSize is %llu", (unsigned long long)workspace_size);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "workspace is NULL but workspaceSize is %llu",
                            (unsigned long long)workspace_size);
        rc = ACLNN_ERR_PARAM_NULLPTR;
    } else if (workspace_size < executor->workspace_required) {
        note_bad_workspace(api, executor, stream, workspace, workspace_size,
                           "workspaceSize %llu is smaller than the %llu bytes phase 1 returned",
                           (unsigned long long)workspace_size, (unsigned long long)executor->workspace_required);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "workspaceSize %llu is smaller than the %llu bytes phase 1 asked for",
                            (unsigned long long)workspace_size, (unsigned long long)executor->workspace_required);
        rc = ACLNN_ERR_PARAM_INVALID;
    } else if ((rc = check_workspace(api, workspace, workspace_size)) != ACLNN_SUCCESS) {
        note_bad_workspace(api, executor, stream, workspace, workspace_size,
                           "workspace %p is not %llu bytes of live device memory (refused with %d: %s)", workspace,
                           (unsigned long long)workspace_size, (int)rc,
                           pyaclnn_stub_mem_lookup(workspace, 1, NULL, NULL) ? "the allocation is smaller than the size passed"
                                                                             : "not device memory");
    } else if (executor->deferred_code != ACLNN_SUCCESS) {
        rc = executor->deferred_code;
        pyaclnn_stub_report(rc, api, "%s", executor->deferred_msg);
    } else if (kernel != NULL && repeatable) {
        launch = malloc(executor->block_size);
        if (launch == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "out of host memory");
            rc = ACLNN_ERR_INNER_NULLPTR;
        } else {
            memcpy(launch, executor, executor->block_size);
            bind_launch(launch);
        }
    }
    pthread_mutex_unlock(&executor_mu);

    if (rc == ACLNN_SUCCESS && kernel != NULL) {   /* launch is ours alone: consumed, or a clone */
        aclTensor *shape_target = launch->shape_target;
        shape_box *box = NULL;
        if (shape_target != NULL) {
            box = malloc(sizeof *box);
            if (box == NULL) {
                free(launch);
                pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "out of host memory");
                return ACLNN_ERR_INNER_NULLPTR;
            }
            atomic_init(&box->refs, 2);   /* the launch's and ours */
            box->shape.ndim = -1;
        }
        launch->launch.out_shape = box ? &box->shape : NULL;
        launch->launch.workspace = workspace;
        launch->launch.workspace_size = workspace_size;
        rc = pin_launch(api, launch, workspace, pyaclnn_stub_stream_device(stream));
        if (rc != ACLNN_SUCCESS) {
            free_launch(launch);
            box_release(box);
            return rc;
        }
        /* The stream releases the block (and its pins) after the kernel ran, or at once if submission
         * fails (the runtime has then reported its own code; the aclnn API says "a runtime call failed"). */
        aclError submit = hazard_mode() ? submit_with_accesses(api, launch, stream, run_launch, free_launch)
                                              : pyaclnn_stub_stream_submit(api, stream, run_launch, free_launch, launch);
        if (submit == ACL_SUCCESS && box != NULL) rc = refresh_out_shape(stream, shape_target, &box->shape);
        box_release(box);
        return submit == ACL_SUCCESS ? rc : ACLNN_ERR_RUNTIME_ERROR;
    }
    if (!repeatable) free(executor);
    return rc;
}

/* ---- lifetime ------------------------------------------------------------------------------ */

/* Executor arguments of the lifetime calls: NULL -> 561103 as in opbase; anything that is not a
 * live executor (consumed, destroyed, foreign) -> ACLNN_ERR_INNER, which is what opbase returns for
 * an object whose executor magic number it does not recognise. */
static aclnnStatus check_lifetime_arg(const char *api, const aclOpExecutor *executor) {
    if (executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "executor is NULL");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    if (!nn_is(executor, NN_KIND_EXECUTOR)) {
        pyaclnn_stub_report(ACLNN_ERR_INNER, api,
                            "executor %p is not a live aclOpExecutor (a single-use executor is freed by its "
                            "run; or it was already destroyed)", (const void *)executor);
        return ACLNN_ERR_INNER;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor) {
    pthread_mutex_lock(&executor_mu);
    aclnnStatus rc = check_lifetime_arg("aclSetAclOpExecutorRepeatable", executor);
    if (rc == ACLNN_SUCCESS) executor->repeatable = 1;
    pthread_mutex_unlock(&executor_mu);
    return rc;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor) {
    static const char API[] = "aclDestroyAclOpExecutor";
    pthread_mutex_lock(&executor_mu);
    aclnnStatus rc = check_lifetime_arg(API, executor);
    if (rc == ACLNN_SUCCESS) stub_registry_remove(&nn_handles, executor, NN_KIND_EXECUTOR);
    pthread_mutex_unlock(&executor_mu);
    if (rc == ACLNN_SUCCESS) free(executor);   /* queued launches own their own copies */
    return rc;
}

/* ---- re-pointing tensors between runs ------------------------------------------------------ */

enum slot_space { SPACE_INPUT, SPACE_OUTPUT, SPACE_ALL };

/* Shared body of aclSet{Input,Output,}TensorAddr: after every check passes, writes addr into the
 * executor's snapshot of that parameter and into the aclTensor itself. */
static aclnnStatus set_tensor_addr_locked(const char *api, enum slot_space space, aclOpExecutor *executor,
                                          size_t index, aclTensor *tensor, void *addr);

static aclnnStatus set_tensor_addr(const char *api, enum slot_space space, aclOpExecutor *executor, size_t index,
                                   aclTensor *tensor, void *addr) {
    pthread_mutex_lock(&executor_mu);   /* the executor stays live while its snapshot changes */
    aclnnStatus rc = set_tensor_addr_locked(api, space, executor, index, tensor, addr);
    pthread_mutex_unlock(&executor_mu);
    return rc;
}

static aclnnStatus set_tensor_addr_locked(const char *api, enum slot_space space, aclOpExecutor *executor,
                                          size_t index, aclTensor *tensor, void *addr) {
    static const char *const SPACE_NAME[] = {"input", "output", "tensor"};
    if (tensor == NULL || executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "%s is NULL", tensor == NULL ? "tensor" : "executor");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    aclnnStatus rc = nn_check_handle(api, "tensor", tensor, NN_KIND_TENSOR, ACLNN_ERR_INNER_NULLPTR);
    if (rc == ACLNN_SUCCESS) rc = nn_check_handle(api, "executor", executor, NN_KIND_EXECUTOR, ACLNN_ERR_INNER_NULLPTR);
    if (rc != ACLNN_SUCCESS) return rc;

    size_t first = space == SPACE_OUTPUT ? executor->launch.n_inputs : 0;
    size_t count = space == SPACE_INPUT ? executor->launch.n_inputs
                 : space == SPACE_OUTPUT ? executor->launch.n_outputs
                 : executor->launch.n_inputs + executor->launch.n_outputs;
    if (index >= count) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s index %zu is out of range: operator %s has %zu %s "
                            "tensor parameter(s)", SPACE_NAME[space], index, executor->launch.op_name, count,
                            space == SPACE_ALL ? "input+output" : SPACE_NAME[space]);
        return ACLNN_ERR_PARAM_INVALID;
    }
    pyaclnn_stub_tensor *slot = &executor->tensors[first + index];
    if (!slot->present) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s index %zu of operator %s is an optional tensor that "
                            "was absent (NULL) in phase 1", SPACE_NAME[space], index, executor->launch.op_name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    slot->data = addr;
    nn_tensor_set_data(tensor, addr);
    if (executor->shape_target != NULL && first + index == executor->launch.n_inputs + executor->shape_output)
        executor->shape_target = tensor;   /* the data-dependent shape now refreshes this tensor */
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr) {
    return set_tensor_addr("aclSetInputTensorAddr", SPACE_INPUT, executor, index, tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr) {
    return set_tensor_addr("aclSetOutputTensorAddr", SPACE_OUTPUT, executor, index, tensor, addr);
}

aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr) {
    return set_tensor_addr("aclSetTensorAddr", SPACE_ALL, executor, index, tensor, addr);
}

/* Shared body of the Dynamic setters, in opbase's order: the list and its element first, then the
 * executor and which list parameter irIndex names. */
static aclnnStatus set_dynamic_addr(const char *api, enum slot_space space, aclOpExecutor *executor, size_t irIndex,
                                    size_t relativeIndex, aclTensorList *tensors, void *addr) {
    static const char *const SPACE_NAME[] = {"input", "output", "tensor"};
    aclnnStatus rc = nn_check_handle(api, "tensors", tensors, NN_KIND_TENSOR_LIST, ACLNN_ERR_INNER_NULLPTR);
    if (rc != ACLNN_SUCCESS) return rc;
    if (relativeIndex >= tensors->size) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "relativeIndex %zu is out of range: the list has %llu "
                            "tensor(s)", relativeIndex, (unsigned long long)tensors->size);
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclTensor *tensor = tensors->items[relativeIndex];
    if (tensor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "element %zu of the list is NULL", relativeIndex);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    pthread_mutex_lock(&executor_mu);
    rc = nn_check_handle(api, "executor", executor, NN_KIND_EXECUTOR, ACLNN_ERR_INNER_NULLPTR);
    size_t lists = rc != ACLNN_SUCCESS ? 0
                 : space == SPACE_INPUT ? executor->n_input_lists
                 : space == SPACE_OUTPUT ? executor->n_output_lists
                 : executor->n_input_lists + executor->n_output_lists;
    const char *op_name = rc != ACLNN_SUCCESS ? NULL : executor->launch.op_name;
    pthread_mutex_unlock(&executor_mu);
    if (rc != ACLNN_SUCCESS) return rc;
    if (irIndex >= lists) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "irIndex %zu is out of range: operator %s has %zu %s "
                            "tensor-list parameter(s)", irIndex, op_name, lists, SPACE_NAME[space]);
        return ACLNN_ERR_PARAM_INVALID;
    }
    /* Unreachable until an operator with tensor-list parameters exists. */
    nn_tensor_set_data(tensor, addr);
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                         aclTensorList *tensors, void *addr) {
    return set_dynamic_addr("aclSetDynamicInputTensorAddr", SPACE_INPUT, executor, irIndex, relativeIndex, tensors,
                            addr);
}

aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                          aclTensorList *tensors, void *addr) {
    return set_dynamic_addr("aclSetDynamicOutputTensorAddr", SPACE_OUTPUT, executor, irIndex, relativeIndex, tensors,
                            addr);
}

aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                    aclTensorList *tensors, void *addr) {
    return set_dynamic_addr("aclSetDynamicTensorAddr", SPACE_ALL, executor, irIndex, relativeIndex, tensors, addr);
}

/* Capitalised spellings CANN keeps for compatibility. */
aclnnStatus AclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr) {
    return aclSetInputTensorAddr(executor, index, tensor, addr);
}

aclnnStatus AclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr) {
    return aclSetOutputTensorAddr(executor, index, tensor, addr);
}

aclnnStatus AclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr) {
    return aclSetTensorAddr(executor, index, tensor, addr);
}

aclnnStatus AclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                         aclTensorList *tensors, void *addr) {
    return aclSetDynamicInputTensorAddr(executor, irIndex, relativeIndex, tensors, addr);
}

aclnnStatus AclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                          aclTensorList *tensors, void *addr) {
    return aclSetDynamicOutputTensorAddr(executor, irIndex, relativeIndex, tensors, addr);
}

aclnnStatus AclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                    aclTensorList *tensors, void *addr) {
    return aclSetDynamicTensorAddr(executor, irIndex, relativeIndex, tensors, addr);
}

/* ---- torch_npu's executor cache (pta_cache.c) ---------------------------------------------- */

/* A private, unregistered copy of a live executor that a later call may replay, or NULL when it must
 * not be replayed: a data-dependent output shape (phase 2 re-describes a caller's tensor), a deferred
 * phase-2 error, a repeatable executor (its caller re-points it), tensor lists (none yet), or no memory. */
aclOpExecutor *nn_executor_cache_copy(const aclOpExecutor *e) {
    aclOpExecutor *copy = NULL;
    pthread_mutex_lock(&executor_mu);
    if (nn_is(e, NN_KIND_EXECUTOR) && e->shape_target == NULL && e->deferred_code == ACLNN_SUCCESS &&
        !e->repeatable && e->n_input_lists == 0 && e->n_output_lists == 0 && (copy = malloc(e->block_size)) != NULL) {
        memcpy(copy, e, e->block_size);
        bind_launch(copy);
        memset(pins_of(copy), 0, n_pins(copy) * sizeof(void *));
    }
    pthread_mutex_unlock(&executor_mu);
    return copy;
}

size_t nn_executor_n_tensors(const aclOpExecutor *e) { return e->launch.n_inputs + e->launch.n_outputs; }

const pyaclnn_stub_tensor *nn_executor_tensor(const aclOpExecutor *e, size_t k) { return &e->tensors[k]; }

const unsigned char *nn_executor_params(const aclOpExecutor *e, size_t *size) {
    *size = e->block_size - e->params_offset;
    return (const unsigned char *)e + e->params_offset;
}

uint64_t nn_executor_workspace(const aclOpExecutor *e) { return e->workspace_required; }

/* A registered single-use executor from a cached copy, each present tensor re-pointed at
 * addrs[slot_addr[k]] (the storage address torch_npu gave for that argument this time). */
aclOpExecutor *nn_executor_instance(const aclOpExecutor *copy, void *const *addrs, const int32_t *slot_addr) {
    aclOpExecutor *e = malloc(copy->block_size);
    if (e == NULL) return NULL;
    memcpy(e, copy, copy->block_size);
    bind_launch(e);
    for (size_t k = 0; k < nn_executor_n_tensors(e); k++)
        if (e->tensors[k].present) e->tensors[k].data = addrs[slot_addr[k]];
    return executor_register(e);
}
