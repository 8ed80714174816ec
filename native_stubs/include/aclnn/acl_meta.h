/*
 * aclnn/acl_meta.h: the aclnn object API (tensors, scalars, arrays, lists, executors), exported by
 * libnnopbase.so.
 *
 * CPU-emulator copy of CANN's header (hicann/opbase include/nnopbase/aclnn/acl_meta.h). Names and
 * prototypes match CANN; comments and layout are ours. CANN's copy is C++-only (<cstdint>,
 * constexpr); this one also compiles as C11, where OK is an enumerator with the same value.
 *
 * Ownership rules worth knowing: aclCreateTensorList/aclCreateScalarList take ownership of the
 * elements (destroying the list destroys them); aclGetViewShape/aclGetViewStrides/aclGetStorageShape
 * return arrays allocated with C++ new[] that the caller must delete[]; every aclDestroy* accepts NULL.
 */
#ifndef OP_API_OP_API_COMMON_INC_EXTERNAL_ACL_META_H
#define OP_API_OP_API_COMMON_INC_EXTERNAL_ACL_META_H

#ifdef __cplusplus
#include <cstdint>
#include <cstdlib>
#else
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#endif
#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The guard lets an older acl_base.h that also declares these coexist with this header. */
#ifndef ACLNN_META
#define ACLNN_META
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;

typedef int32_t aclnnStatus;  /* 0 = OK; the other codes are in aclnn/opdev/op_errno.h */
#ifdef __cplusplus
constexpr aclnnStatus OK = 0;
#else
enum { OK = 0 };
#endif
#endif

/*
 * A tensor is a strided view of storage at tensorData: element i lives at
 * tensorData + (offset + sum(i_k * stride_k)) * element size. stride and offset count elements,
 * stride may be NULL (contiguous), storageDims need not have the view's rank. Returns NULL on bad input.
 */
ACL_FUNC_VISIBILITY aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                               const int64_t *stride, int64_t offset, aclFormat format,
                                               const int64_t *storageDims, uint64_t storageDimsNum,
                                               void *tensorData);

/* Copies the value (sizeof of dataType bytes) at once. */
ACL_FUNC_VISIBILITY aclScalar *aclCreateScalar(void *value, aclDataType dataType);
ACL_FUNC_VISIBILITY aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACL_FUNC_VISIBILITY aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACL_FUNC_VISIBILITY aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
/* The list owns the tensors / scalars from here on. */
ACL_FUNC_VISIBILITY aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
ACL_FUNC_VISIBILITY aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size);

ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *tensor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar *scalar);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensorList(const aclTensorList *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalarList(const aclScalarList *array);

/* The returned arrays are new[]-allocated; the caller delete[]s them. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                                   uint64_t *storageDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                                  uint64_t *stridesNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format);
ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType);
ACL_FUNC_VISIBILITY aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size);

/* Re-describes an existing tensor with the same arguments as aclCreateTensor. */
ACL_FUNC_VISIBILITY aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum,
                                              aclDataType dataType, const int64_t *stride, int64_t offset,
                                              aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                                              void *tensorDataAddr);

/*
 * Executors. By default phase 2 of an operator consumes and frees its executor. Calling
 * aclSetAclOpExecutorRepeatable right after phase 1 keeps it alive for any number of runs until
 * aclDestroyAclOpExecutor; between runs the aclSet*TensorAddr calls rebind device addresses
 * (index: position among the operator's inputs, outputs, or both in that order; the Dynamic forms
 * address element relativeIndex of tensor-list parameter irIndex).
 */
ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);

/* Capitalised spellings kept by CANN; each forwards to the lower-case function below. */
ACL_FUNC_VISIBILITY aclnnStatus AclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                                      void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                                       void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                             const size_t relativeIndex, aclTensorList *tensors,
                                                             void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                              const size_t relativeIndex, aclTensorList *tensors,
                                                              void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                                 void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                        const size_t relativeIndex, aclTensorList *tensors,
                                                        void *addr);

ACL_FUNC_VISIBILITY aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                                      void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                                       void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                             const size_t relativeIndex, aclTensorList *tensors,
                                                             void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                              const size_t relativeIndex, aclTensorList *tensors,
                                                              void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                                 void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                        const size_t relativeIndex, aclTensorList *tensors,
                                                        void *addr);

/* The storage base address of a tensor (what aclCreateTensor got as tensorData). */
ACL_FUNC_VISIBILITY aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr);

/*
 * Dumps an operator's tensors (inputs first, then outputs) for accuracy comparison. New in 2026:
 * older libraries lack it, so bind it optionally.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclDumpOpTensors(const char *opType, const char *opName, aclTensor **tensors,
                                                 size_t inputTensorNum, size_t outputTensorNum, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_OP_API_COMMON_INC_EXTERNAL_ACL_META_H */
