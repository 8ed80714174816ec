/*
 * libnnopbase internals: the layout of the aclnn objects and the one handle registry that every
 * public entry point consults before touching a pointer it was given.
 */
#ifndef PYACLNN_NNOPBASE_INTERNAL_H
#define PYACLNN_NNOPBASE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "../common/handle_registry.h"
#include "pyaclnn_stub.h"

/* Kinds of handle kept in nn_handles (0 means "not a live handle"). */
enum {
    NN_KIND_TENSOR = 1,
    NN_KIND_SCALAR,
    NN_KIND_INT_ARRAY,
    NN_KIND_FLOAT_ARRAY,
    NN_KIND_BOOL_ARRAY,
    NN_KIND_TENSOR_LIST,
    NN_KIND_SCALAR_LIST,
    NN_KIND_EXECUTOR,
};

/* Every live object of this library, keyed by its address. */
extern stub_registry nn_handles;

/* Serialises changes of list ownership (list create/destroy, tensor/scalar destroy), so that an
 * element can never be freed twice or freed while a list still owns it. */
extern pthread_mutex_t nn_ownership_lock;
/* Serialises launching, consuming, destroying and re-pointing executors (executor.c). */
extern pthread_mutex_t executor_mu;

/* A tensor's description is read and written as a whole under its lock (one of a small table,
 * picked by the tensor's address; tensor.c), so a reader never gets a mix of two descriptions while
 * aclInitTensor or an address setter runs in another thread. Lock order: executor_mu,
 * nn_ownership_lock, then a tensor lock; nothing else is taken while one is held. */
#define NN_TENSOR_LOCKS 16   /* few: fork() holds them all (ThreadSanitizer tracks at most 64 held locks) */
extern pthread_mutex_t nn_tensor_locks[NN_TENSOR_LOCKS];
pthread_mutex_t *nn_tensor_lock(const void *tensor);
/* Sets the description's data address (the setters), under the tensor's lock. */
void nn_tensor_set_data(aclTensor *tensor, void *addr);

struct aclTensor {
    pyaclnn_stub_tensor desc;    /* exactly what pyaclnn_stub_tensor_get hands out (present = 1) */
    const aclTensorList *owner;  /* the list that will destroy this tensor, or NULL             */
};

struct aclScalar {
    aclDataType dtype;
    unsigned char value[16];     /* large enough for COMPLEX128 */
    const aclScalarList *owner;
};

/* aclIntArray, aclFloatArray and aclBoolArray: a size and a trailing copy of the values. */
struct aclIntArray { uint64_t size; int64_t values[]; };
struct aclFloatArray { uint64_t size; float values[]; };
struct aclBoolArray { uint64_t size; bool values[]; };

struct aclTensorList { uint64_t size; aclTensor *items[]; };
struct aclScalarList { uint64_t size; aclScalar *items[]; };

/* 1 if the handle is live and of this kind. */
static inline int nn_is(const void *p, int kind) { return p != NULL && stub_registry_kind(&nn_handles, p) == kind; }

/* Validates a handle argument of a public function: NULL -> reports null_code; not a live object
 * of this kind (stale, foreign, or another kind) -> reports ACLNN_ERR_PARAM_INVALID saying what
 * it is instead. `api` is the public function, `param` the parameter name. Returns 0 if usable. */
aclnnStatus nn_check_handle(const char *api, const char *param, const void *p, int kind, aclnnStatus null_code);
/* "aclTensor", "aclScalar", ... for messages. */
const char *nn_kind_name(int kind);

/* Human-readable dtype name for messages ("FLOAT16", "dtype 99" for unknown values). */
const char *nn_dtype_name(aclDataType dtype, char buf[24]);
/* Bytes an aclScalar of this dtype copies; 0 for dtypes that cannot be a scalar or unknown values. */
size_t nn_scalar_bytes(aclDataType dtype);

/* torch_npu's executor cache (pta_cache.c) over the executor's internals (executor.c). */
aclOpExecutor *nn_executor_cache_copy(const aclOpExecutor *e);
size_t nn_executor_n_tensors(const aclOpExecutor *e);
const pyaclnn_stub_tensor *nn_executor_tensor(const aclOpExecutor *e, size_t k);
const unsigned char *nn_executor_params(const aclOpExecutor *e, size_t *size);
uint64_t nn_executor_workspace(const aclOpExecutor *e);
aclOpExecutor *nn_executor_instance(const aclOpExecutor *copy, void *const *addrs, const int32_t *slot_addr);

#endif
