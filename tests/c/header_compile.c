/*
 * Compiles every public header of the emulator as C11 (cc -std=c11 -Wall -Werror -fsyntax-only).
 * Checks that the C spellings work: unqualified enumerators, OK as a constant expression,
 * bool in aclCreateBoolArray, and a few values/sizes fixed by the ABI.
 */
#include "acl/acl.h"
#include "acl/acl_base.h"
#include "acl/acl_base_rt.h"
#include "acl/acl_rt.h"
#include "acl/error_codes/ge_error_codes.h"
#include "acl/error_codes/rt_error_codes.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_util.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_add_rms_norm_dynamic_quant.h"
#include "aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant_v2.h"

_Static_assert(sizeof(aclDataType) == 4, "enums are int-sized");
_Static_assert(sizeof(aclFormat) == 4, "enums are int-sized");
_Static_assert(sizeof(aclnnStatus) == 4, "aclnnStatus is int32_t");
_Static_assert(sizeof(aclFloat16) == 2, "aclFloat16 is uint16_t");
_Static_assert(ACL_FLOAT == 0 && ACL_BF16 == 27 && ACL_FLOAT4_E1M2 == 41, "aclDataType values");
_Static_assert(ACL_FORMAT_ND == 2 && ACL_FORMAT_NCL == 47, "aclFormat values");
_Static_assert(ACL_MEMCPY_DEVICE_TO_HOST == 2 && ACL_MEM_ACCESS_USER_SPACE_READONLY == 0x100000, "rt enums");
_Static_assert(ACL_ERROR_RT_CONTEXT_NULL == 107002 && ACLNN_ERR_PARAM_NULLPTR == 161001, "status codes");
_Static_assert(ACL_EVENT_TIME_LINE == 8u && ACL_MAJOR_VERSION == 1 && ACL_MINOR_VERSION == 17, "macros");
_Static_assert(OK == 0, "OK is a constant expression in C");

/* Function pointers with the exact prototypes catch a mismatch between the headers' declarations. */
static aclnnStatus (*const phase2)(void *, uint64_t, aclOpExecutor *, aclrtStream) = aclnnAmpUpdateScale;

int header_compile_c(void);
int header_compile_c(void)
{
    const int64_t dims[2] = {2, 3};
    const bool mask[2] = {true, false};
    aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, dims, 2, NULL);
    aclBoolArray *m = aclCreateBoolArray(mask, 2);
    aclError rc = aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE);
    (void)phase2;
    (void)aclDestroyBoolArray(m);
    return rc == ACL_SUCCESS && aclDestroyTensor(t) == OK;
}
