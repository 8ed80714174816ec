/*
 * Cross-library internals of the CPU emulator.
 *
 * The public ABI is exactly CANN's (include/). These pyaclnn_stub_* functions are what our three
 * libraries need from each other; they are exported (so the libraries can link to one another and
 * tests can inspect state through ctypes) but never declared in a public header.
 *
 *   libascendcl.so  provides: error reporting, SoC selection, streams/tasks, device memory lookup,
 *                             live-object counters.
 *   libnnopbase.so  provides: validated tensor snapshots, executors (phase 1 -> phase 2 -> kernel).
 *   libopapi.so     provides: the operators; it only consumes the two APIs below.
 */
#ifndef PYACLNN_STUB_H
#define PYACLNN_STUB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYACLNN_STUB_API __attribute__((visibility("default")))

/* ------------------------------------------------------------------------------------------------
 * Errors (libascendcl). Every failing public entry point calls pyaclnn_stub_report() exactly once
 * before returning its status: it appends "[PID: n] <time> <func>(<code>): <reason>" (the vendor's
 * layout) to the calling thread's recent-error buffer (read and cleared by aclGetRecentErrMsg,
 * newest first) and sets the thread's last runtime error (aclrtGetLastError). `func` is the public
 * API name.
 * ------------------------------------------------------------------------------------------------ */
PYACLNN_STUB_API void pyaclnn_stub_report(int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
PYACLNN_STUB_API void pyaclnn_stub_vreport(int code, const char *func, const char *fmt, va_list ap);

/* ------------------------------------------------------------------------------------------------
 * SoC (libascendcl): from PYACLNN_STUB_SOC, default "Ascend950PR". Read once per process.
 * ------------------------------------------------------------------------------------------------ */
typedef enum {
    PYACLNN_SOC_OTHER = 0,   /* a name we do not know: operators refuse as on unsupported SoCs  */
    PYACLNN_SOC_A2 = 1,      /* Ascend910B*, Ascend910_93* (Atlas A2/A3, "arch22")               */
    PYACLNN_SOC_950 = 2,     /* Ascend950*            ("arch35", regbase kernels)                 */
} pyaclnn_soc_family;
PYACLNN_STUB_API pyaclnn_soc_family pyaclnn_stub_soc_family(void);

/* ------------------------------------------------------------------------------------------------
 * Streams (libascendcl). A task runs on the stream's worker thread, after every task submitted
 * before it on that stream. `run` executes it; `release` (may be NULL) frees `arg` afterwards and
 * is also called if submission fails. stream == NULL means the calling thread's current context's
 * default stream. Returns ACL_SUCCESS or the runtime status (and reports it under `func`).
 * ------------------------------------------------------------------------------------------------ */
typedef void (*pyaclnn_stub_task_fn)(void *arg);
/* 1 in a child forked after the runtime had started (see runtime/fork.c): device work is refused. */
PYACLNN_STUB_API int pyaclnn_stub_forked_child(void);
/* The device of a stream (NULL: the calling thread's current device), or -1 if it is not live. */
PYACLNN_STUB_API int32_t pyaclnn_stub_stream_device(aclrtStream stream);
PYACLNN_STUB_API aclError pyaclnn_stub_stream_submit(const char *func, aclrtStream stream,
                                                     pyaclnn_stub_task_fn run,
                                                     pyaclnn_stub_task_fn release, void *arg);

/* Called from inside a running task: records an asynchronous failure on the task's stream. The
 * next aclrtSynchronizeStream / aclrtSynchronizeDevice / event sync that covers the task returns
 * `code` and leaves the message for aclGetRecentErrMsg (as a device fault surfaces on an NPU). */
PYACLNN_STUB_API void pyaclnn_stub_task_fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------------------------------------
 * Device memory (libascendcl). Device memory is host memory, tracked by range.
 * Returns 1 and the allocation's base/size if [p, p+nbytes) lies inside one live aclrtMalloc
 * allocation (or a range registered with pyaclnn_stub_mem_register), else 0.
 * ------------------------------------------------------------------------------------------------ */
PYACLNN_STUB_API int pyaclnn_stub_mem_lookup(const void *p, size_t nbytes, void **base, size_t *size);
/* Keeps the allocation that holds p from being released (an aclrtFree of it is then completed
 * when the last pin goes), so queued work can use it safely. Returns the pin, or NULL when p is
 * not in memory the runtime knows; *device (may be NULL) gets the device of device memory, -1 for
 * host memory (pinned or registered), which every device may address. */
PYACLNN_STUB_API void *pyaclnn_stub_mem_pin(const void *p, int32_t *device);
PYACLNN_STUB_API void pyaclnn_stub_mem_unpin(void *pin);   /* NULL: nothing */
/* What the host can back (runtime/host_memory.c): the smaller of MemTotal and the process's cgroup
 * memory limits, read from the /proc and /sys tree under `root` (NULL: the real one), in bytes; 0 if
 * MemTotal cannot be read. The default device capacity is made from it (device.c). */
PYACLNN_STUB_API uint64_t pyaclnn_stub_host_memory_limit(const char *root);
/* Host memory that device code may address directly (zero-copy wrapping of host arrays/tensors). */
PYACLNN_STUB_API aclError pyaclnn_stub_mem_register(void *p, size_t nbytes);
PYACLNN_STUB_API aclError pyaclnn_stub_mem_unregister(void *p);

/* ------------------------------------------------------------------------------------------------
 * Live-object accounting (each library counts its own objects; libascendcl sums them).
 * ------------------------------------------------------------------------------------------------ */
typedef struct {
    int64_t device_allocations;   /* aclrtMalloc* not yet freed           */
    int64_t device_bytes;         /* bytes of those (as requested)        */
    int64_t host_allocations;     /* aclrtMallocHost not yet freed        */
    int64_t streams;              /* user-created streams                 */
    int64_t events;
    int64_t contexts;             /* user-created contexts                */
    int64_t tensors;              /* aclTensor (incl. those owned by lists) */
    int64_t scalars;
    int64_t arrays;               /* int/float/bool arrays                */
    int64_t tensor_lists;
    int64_t scalar_lists;
    int64_t executors;            /* executors not yet consumed/destroyed */
    int64_t host_registrations;   /* pyaclnn_stub_mem_register ranges not yet unregistered */
} pyaclnn_stub_counts;
PYACLNN_STUB_API void pyaclnn_stub_live_counts(pyaclnn_stub_counts *out);      /* libascendcl: all */
PYACLNN_STUB_API void pyaclnn_stub_nnopbase_counts(pyaclnn_stub_counts *out);  /* libnnopbase part */

/* ------------------------------------------------------------------------------------------------
 * Hazard checker (libascendcl; docs/hazards.md). PYACLNN_STUB_HAZARDS=off|report|error and
 * PYACLNN_STUB_POISON=1 are read once when libascendcl loads.
 * ------------------------------------------------------------------------------------------------ */
enum {
    PYACLNN_HAZARD_READ_BEFORE_SYNC = 0,
    PYACLNN_HAZARD_FREE_IN_FLIGHT = 1,
    PYACLNN_HAZARD_CROSS_STREAM = 2,
    PYACLNN_HAZARD_BAD_WORKSPACE = 3,
    PYACLNN_HAZARD_UNINITIALIZED_READ = 4,
};
/* Bytes a task reads or writes (a conservative [addr, addr + nbytes) extent). */
typedef struct {
    const void *addr;
    uint64_t nbytes;
    int write;
} pyaclnn_stub_access;
/* One finding, as printed on stderr ("pyaclnn-stub hazard: <kind>: <line>"). */
typedef struct {
    int kind;                   /* PYACLNN_HAZARD_*                                           */
    char api[48];               /* the offending API call                                     */
    char op[48];                /* its operator or task ("Add", "memcpy", "host" ...)         */
    const void *stream;         /* its stream; NULL for a host-side call                      */
    const void *other_stream;   /* stream of the conflicting task (NULL if none)              */
    char other_op[48];          /* the conflicting task's operator ("" if none)               */
    char other_api[48];         /* the call that queued it                                    */
    uint64_t lo, hi;            /* the bytes concerned, [lo, hi)                              */
    uint64_t alloc;             /* base of the allocation holding them (0 if unknown)         */
    char line[704];
} pyaclnn_stub_hazard;
typedef struct {
    int64_t read_before_sync, free_in_flight, cross_stream, bad_workspace, uninitialized_read;
} pyaclnn_stub_hazard_counts;
/* The operator switches' generation (runtime/switches.c): a reader re-reads its variables when it moved.
 * pyaclnn_stub_reread_switches() moves it, so the next use reads the environment again. */
PYACLNN_STUB_API unsigned pyaclnn_stub_switch_generation(void);
PYACLNN_STUB_API void pyaclnn_stub_reread_switches(void);
PYACLNN_STUB_API int pyaclnn_stub_hazard_mode(void);   /* 0 off, 1 report, 2 error */
PYACLNN_STUB_API int pyaclnn_stub_poison(void);        /* 1 with PYACLNN_STUB_POISON=1 */
/* Switches the mode (0..2) for tests that provoke hazards on purpose; returns the previous one (-1 for
 * a bad value). Forgets what was recorded. */
PYACLNN_STUB_API int pyaclnn_stub_hazard_set_mode(int mode);
/* Copies up to cap findings (out == NULL: none) and returns how many were copied (out == NULL: how
 * many there are); clear != 0 empties the list and zeroes the counters. */
PYACLNN_STUB_API size_t pyaclnn_stub_hazards(pyaclnn_stub_hazard *out, size_t cap, int clear);
PYACLNN_STUB_API void pyaclnn_stub_hazard_counts_get(pyaclnn_stub_hazard_counts *out);
/* Logs a finding that another library detected (bad-workspace); nothing when the checker is off. */
PYACLNN_STUB_API void pyaclnn_stub_hazard_note(int kind, const char *api, const char *op, aclrtStream stream,
                                               const void *addr, uint64_t nbytes, const char *why);
/* pyaclnn_stub_stream_submit, with the bytes the task reads and writes and its operator name, for
 * the checker (accesses are ignored when it is off). */
PYACLNN_STUB_API aclError pyaclnn_stub_stream_submit_accesses(const char *func, aclrtStream stream,
                                                              pyaclnn_stub_task_fn run,
                                                              pyaclnn_stub_task_fn release, void *arg,
                                                              const char *op, const pyaclnn_stub_access *acc,
                                                              size_t n_acc);

/* ------------------------------------------------------------------------------------------------
 * Tensors and executors (libnnopbase).
 * ------------------------------------------------------------------------------------------------ */
#define PYACLNN_STUB_MAX_DIMS 25  /* aclCreateTensor refuses (returns NULL) beyond this rank */

/* A plain-value copy of an aclTensor: safe to keep after the aclTensor is destroyed.
 * Element i of the view lives at data + (offset + sum_k i_k * strides[k]) * itemsize; for 4-bit
 * types (INT4, FLOAT4_*) the units are 4-bit elements (two per byte, element 2k in the low nibble). */
typedef struct {
    int present;                                /* 0 for an absent optional tensor (NULL)     */
    aclDataType dtype;
    aclFormat format;
    int64_t ndim;                               /* 0 = 0-d tensor                             */
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
    int64_t strides[PYACLNN_STUB_MAX_DIMS];     /* in elements                                */
    int64_t offset;                             /* in elements                                */
    int64_t storage_ndim;
    int64_t storage_shape[PYACLNN_STUB_MAX_DIMS];
    void *data;                                 /* storage base address                       */
} pyaclnn_stub_tensor;

/* Validated snapshot of a tensor handle. t == NULL gives {present = 0} and returns 0.
 * A handle that is not a live aclTensor returns ACLNN_ERR_PARAM_INVALID (nothing reported).
 * The snapshot is consistent: one whole description, never a mix of the one before and the one
 * after an aclInitTensor or address setter running in another thread. */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_tensor_get(const aclTensor *t, pyaclnn_stub_tensor *out);
/* Helpers on snapshots. */
PYACLNN_STUB_API int64_t pyaclnn_stub_numel(const pyaclnn_stub_tensor *t);       /* 1 for 0-d   */
PYACLNN_STUB_API int pyaclnn_stub_is_contiguous(const pyaclnn_stub_tensor *t);
/* Dims [from, ndim) of t are row-major contiguous (size-1 dims' strides unused): rows of that many
 * elements are one block of memory. */
PYACLNN_STUB_API int pyaclnn_stub_dims_contiguous(const pyaclnn_stub_tensor *t, int64_t from);
/* Validated read of a bool array (NULL handle -> returns 0 and *n = 0, values untouched). */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_bool_array_get(const aclBoolArray *a, const bool **values,
                                                        uint64_t *n);

/* Validated read of an int array (NULL handle -> returns 0 and *n = 0, values untouched). */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_int_array_get(const aclIntArray *a, const int64_t **values,
                                                       uint64_t *n);
/* Validated read of a tensor list: its elements (borrowed; valid while the list lives). A handle that
 * is not a live aclTensorList returns ACLNN_ERR_PARAM_INVALID (nothing reported); NULL is the
 * caller's to check. */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_tensor_list_get(const aclTensorList *l, const aclTensor *const **items,
                                                         uint64_t *n);
/* The same for a scalar list (its aclScalar elements, borrowed). */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_scalar_list_get(const aclScalarList *l, const aclScalar *const **items,
                                                         uint64_t *n);

/* Validated read of an aclScalar: its dtype and a copy of its value bytes (16 bytes, enough for
 * COMPLEX128; the value sits at the start in the dtype's host layout). A handle that is not a live
 * aclScalar returns ACLNN_ERR_PARAM_INVALID (nothing reported); NULL is the caller's to check. */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_scalar_get(const aclScalar *s, aclDataType *dtype,
                                                    unsigned char value[16]);

/* A data-dependent output shape (opbase's OP_OUTSHAPE, e.g. MaskedSelect): the kernel writes the
 * real shape here; ndim -1 means it reported none (it failed before, or did not run). */
typedef struct {
    int64_t ndim;
    int64_t dims[PYACLNN_STUB_MAX_DIMS];
} pyaclnn_stub_shape;

/* What a kernel sees when it runs on the stream: snapshots taken at phase-2 time (so tensors may
 * be destroyed, and repeatable executors re-pointed, while the launch is still queued). */
typedef struct {
    const char *op_name;
    size_t n_inputs, n_outputs;
    const pyaclnn_stub_tensor *inputs;    /* in the operator's parameter order             */
    const pyaclnn_stub_tensor *outputs;
    const void *params;                   /* operator attributes, immutable after phase 1  */
    void *workspace;
    uint64_t workspace_size;
    pyaclnn_stub_shape *out_shape;        /* non-NULL only for a data-dependent output shape  */
} pyaclnn_stub_launch;
typedef void (*pyaclnn_stub_kernel_fn)(const pyaclnn_stub_launch *launch);

/* Phase 1: build an executor. `inputs`/`outputs` are the operator's tensor parameters in header
 * order (NULL entries allowed for absent optional tensors); they are snapshotted now and re-pointed
 * by aclSet{Input,Output,}TensorAddr. `params` (params_size bytes) is copied. `kernel` may be NULL
 * for a launch that does nothing (empty tensors). Returns NULL only on allocation failure. */
PYACLNN_STUB_API aclOpExecutor *pyaclnn_stub_executor_new(
    const char *op_name, pyaclnn_stub_kernel_fn kernel, const void *params, size_t params_size,
    const aclTensor *const *inputs, size_t n_inputs, const aclTensor *const *outputs,
    size_t n_outputs, uint64_t workspace_size);

/* Phase 1 from snapshots: the same executor, built from the tensor snapshots phase 1 took and
 * validated (pyaclnn_stub_tensor_get, once per tensor) rather than from the handles, so that the
 * executor runs exactly the descriptions phase 1 checked even if another thread re-describes a
 * tensor (aclInitTensor, aclSetRawTensorAddr) meanwhile. An absent optional tensor is a snapshot
 * with present == 0 (what pyaclnn_stub_tensor_get gives for NULL). `inputs`/`outputs` may be NULL
 * only when their count is 0. The snapshots are copied; re-pointing works as for
 * pyaclnn_stub_executor_new (the executor's tensor indices are the same). Returns NULL, with a
 * report (ACLNN_ERR_INNER_CREATE_EXECUTOR) under op_name, on allocation failure or for something
 * that is not a snapshot (present not 0/1, a rank outside [0, PYACLNN_STUB_MAX_DIMS]). */
PYACLNN_STUB_API aclOpExecutor *pyaclnn_stub_executor_new_snapshots(
    const char *op_name, pyaclnn_stub_kernel_fn kernel, const void *params, size_t params_size,
    const pyaclnn_stub_tensor *inputs, size_t n_inputs, const pyaclnn_stub_tensor *outputs,
    size_t n_outputs, uint64_t workspace_size);

/* Test hook (libopapi): every operator's phase 1 pauses this long between its checks and building its
 * executor (0, the default: no pause), so that a test can race that window on purpose. */
PYACLNN_STUB_API void pyaclnn_stub_phase1_test_pause(unsigned microseconds);

/* Make phase 2 of this executor fail with `code` and this message (how the vendor surfaces tiling
 * and kernel-selection rejections: phase 1 returns 0, phase 2 refuses and writes nothing). */
PYACLNN_STUB_API void pyaclnn_stub_executor_defer_error(aclOpExecutor *executor, aclnnStatus code,
                                                        const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Data-dependent output shape (opbase's OP_OUTSHAPE): phase 2 of this executor hands its kernel a
 * pyaclnn_stub_shape (launch->out_shape) to fill, waits for the stream (as CANN's launch of such an
 * operator synchronises), and then makes the shape the kernel wrote the view shape of `target`, the
 * aclTensor of output `output_index` (contiguous strides), so that aclGetViewShape on it reports the
 * real shape, as torch_npu's masked_select reads it. aclSetOutputTensorAddr with that index moves
 * the refresh to the tensor it is given. Returns 0, or 161002 for a bad index or handle. */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_executor_set_out_shape(aclOpExecutor *executor, size_t output_index,
                                                                aclTensor *target);

/* Phase 2, shared by every aclnnXxx(workspace, workspaceSize, executor, stream): validates the
 * executor (NULL -> 161001, stale/consumed -> 161002 with a message), the workspace (size > 0 with
 * NULL -> 161001), submits the kernel to the stream, and consumes a non-repeatable executor
 * (whether or not the launch succeeded, as opbase does). `api` is the public function name. */
PYACLNN_STUB_API aclnnStatus pyaclnn_stub_executor_run(const char *api, void *workspace,
                                                      uint64_t workspace_size,
                                                      aclOpExecutor *executor, aclrtStream stream);

/* torch_npu's executor cache (libnnopbase, nnopbase/pta_cache.c; docs/torch_npu.md). Phase 1 offers each
 * executor it built, or NULL when it failed (`ws_api` is the aclnnXxxGetWorkspaceSize it ran under); the
 * cache keeps a copy when torch_npu announced a key for this call on this thread. */
PYACLNN_STUB_API void pyaclnn_stub_pta_offer(const char *ws_api, aclOpExecutor *executor);
/* Process-wide counters (hits: executors handed out from the cache; records: copies kept; refused:
 * offers not kept) and the calling thread's number of cached entries. Any pointer may be NULL. */
PYACLNN_STUB_API void pyaclnn_stub_pta_stats(uint64_t *hits, uint64_t *records, uint64_t *refused,
                                            uint64_t *thread_entries);
/* Empties the calling thread's cache (tests). */
PYACLNN_STUB_API void pyaclnn_stub_pta_clear(void);

#ifdef __cplusplus
}
#endif
#endif /* PYACLNN_STUB_H */
