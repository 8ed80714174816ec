// Compiles every public header of the emulator as C++11 (c++ -std=c++11 -Wall -Werror -fsyntax-only),
// the way CANN samples use them: qualified enumerators (aclDataType::ACL_FLOAT), constexpr OK,
// extern "C" linkage, and a few values/sizes fixed by the ABI.
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

#include <cstdint>
#include <type_traits>
#include <vector>

static_assert(sizeof(aclDataType) == 4 && sizeof(aclFormat) == 4, "enums are int-sized");
static_assert(std::is_same<aclnnStatus, int32_t>::value, "aclnnStatus is int32_t");
static_assert(std::is_same<aclError, int>::value, "aclError is int");
static_assert(std::is_same<aclFloat16, uint16_t>::value, "aclFloat16 is uint16_t");
static_assert(aclDataType::ACL_FLOAT == 0 && aclDataType::ACL_FLOAT16 == 1, "aclDataType values");
static_assert(aclDataType::ACL_FLOAT8_E4M3FN == 36 && aclDataType::ACL_FLOAT8_E8M0 == 37, "fp8 values");
static_assert(aclFormat::ACL_FORMAT_ND == 2 && aclFormat::ACL_FORMAT_UNDEFINED == -1, "aclFormat values");
static_assert(ACL_HOST == 1 && ACL_MEMCPY_INTER_DEVICE_TO_DEVICE == 7, "implicit enum values");
static_assert(OK == 0 && ACL_SUCCESS == 0 && ACLNN_SUCCESS == 0, "success codes");
static_assert(ACL_ERROR_REPEAT_INITIALIZE == 100002 && ACL_ERROR_GE_PARAM_INVALID == 145000U, "codes");

// A sample-shaped fragment: create a tensor the way the official examples do.
int header_compile_cpp()
{
    std::vector<int64_t> shape = {4, 2};
    std::vector<int64_t> strides(shape.size(), 1);
    aclTensor *tensor = aclCreateTensor(shape.data(), shape.size(), aclDataType::ACL_FLOAT, strides.data(), 0,
                                        aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), nullptr);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    aclnnStatus ret = aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(tensor, tensor, "rint", 36, 32, 0, 0.0, tensor,
                                                                  tensor, &workspaceSize, &executor);
    aclrtStream stream = nullptr;
    ret |= aclnnGroupedDynamicMxQuantV2(nullptr, workspaceSize, executor, stream);
    ret |= aclDestroyTensor(tensor);
    return ret == OK ? static_cast<int>(aclrtSynchronizeStream(stream)) : 1;
}
