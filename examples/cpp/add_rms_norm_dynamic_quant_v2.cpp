// aclnnAddRmsNormDynamicQuantV2 end to end: the same calls, in the same order, as the vendor sample
// (hicann/ops-nn norm/add_rms_norm_dynamic_quant/examples/test_aclnn_add_rms_norm_dynamic_quant_v2.cpp),
// written anew. Builds unchanged against a CANN toolkit or against pyaclnn's CPU stub:
//
//   c++ add_rms_norm_dynamic_quant_v2.cpp -I<include> -L<lib> -lascendcl -lnnopbase -lopapi -Wl,-rpath,<lib>
//
// Inputs as in the sample: x1 = x2 = 0.5 (fp16 0x3800) of shape [2, 8]; gamma = beta = smoothScale1 =
// smoothScale2 = 1.5 (0x3e00); epsilon 1e-6; no outputMask (both outputs active: two smooth scales).
// x1 + x2 = 1.0 everywhere, so y = 1.0 * rstd * 1.5 + 1.5 ~ 3.0 (rstd = 1/sqrt(1 + 1e-6)) and, times
// smooth 1.5, ~ 4.5 in every column: both quantised outputs are 127 everywhere and both scales are
// 0.03543306 (spec B.15).
//
// One difference from the sample: it allocates every buffer as `short` elements, which gives the two
// FLOAT scale outputs [2, 1] only 4 of their 8 bytes; here each buffer has its element type's size.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h"

#define CHECK_OK(expr, what)                                          \
    do {                                                              \
        auto status_ = (expr);                                        \
        if (status_ != 0) {                                           \
            std::printf("%s failed. ERROR: %d\n", what, (int)status_); \
            return (int)status_;                                      \
        }                                                             \
    } while (0)

static int64_t ShapeSize(const std::vector<int64_t>& shape) {
    int64_t size = 1;
    for (int64_t dim : shape) size *= dim;
    return size;
}

// Device buffer holding a copy of `host`, described by a contiguous ND aclTensor.
template <typename T>
static int MakeDeviceTensor(const std::vector<T>& host, const std::vector<int64_t>& shape, aclDataType dtype,
                            void** deviceAddr, aclTensor** tensor) {
    size_t bytes = sizeof(T) * static_cast<size_t>(ShapeSize(shape));
    CHECK_OK(aclrtMalloc(deviceAddr, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    CHECK_OK(aclrtMemcpy(*deviceAddr, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    *tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    return 0;
}

int main() {
    // 1. Runtime: init, device 0, one stream.
    const int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    CHECK_OK(aclInit(nullptr), "aclInit");
    CHECK_OK(aclrtSetDevice(deviceId), "aclrtSetDevice");
    CHECK_OK(aclrtCreateStream(&stream), "aclrtCreateStream");

    // 2. Inputs and outputs.
    const std::vector<int64_t> xShape = {2, 8};
    const std::vector<int64_t> gammaShape = {8};
    const std::vector<int64_t> betaShape = {8};
    const std::vector<int64_t> reduceShape = {2, 1};
    const int64_t xSize = ShapeSize(xShape);
    const int64_t gammaSize = ShapeSize(gammaShape);
    const int64_t reduceSize = ShapeSize(reduceShape);
    const uint16_t half05 = 0x3800;  // 0.5 in fp16
    const uint16_t half15 = 0x3e00;  // 1.5 in fp16
    void* x1Addr = nullptr;
    void* x2Addr = nullptr;
    void* gammaAddr = nullptr;
    void* betaAddr = nullptr;
    void* smooth1Addr = nullptr;
    void* smooth2Addr = nullptr;
    void* y1Addr = nullptr;
    void* y2Addr = nullptr;
    void* xAddr = nullptr;
    void* scale1Addr = nullptr;
    void* scale2Addr = nullptr;
    aclTensor* x1 = nullptr;
    aclTensor* x2 = nullptr;
    aclTensor* gamma = nullptr;
    aclTensor* beta = nullptr;
    aclTensor* smooth1 = nullptr;
    aclTensor* smooth2 = nullptr;
    aclTensor* y1 = nullptr;
    aclTensor* y2 = nullptr;
    aclTensor* x = nullptr;
    aclTensor* scale1 = nullptr;
    aclTensor* scale2 = nullptr;
    const float epsilon = 1e-6f;
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(xSize, half05), xShape, ACL_FLOAT16, &x1Addr, &x1), "create x1");
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(xSize, half05), xShape, ACL_FLOAT16, &x2Addr, &x2), "create x2");
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(gammaSize, half15), gammaShape, ACL_FLOAT16, &gammaAddr, &gamma),
             "create gamma");
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(gammaSize, half15), betaShape, ACL_FLOAT16, &betaAddr, &beta),
             "create beta");
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(gammaSize, half15), gammaShape, ACL_FLOAT16, &smooth1Addr,
                              &smooth1), "create smooth1");
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(gammaSize, half15), gammaShape, ACL_FLOAT16, &smooth2Addr,
                              &smooth2), "create smooth2");
    CHECK_OK(MakeDeviceTensor(std::vector<int8_t>(xSize, 0), xShape, ACL_INT8, &y1Addr, &y1), "create y1");
    CHECK_OK(MakeDeviceTensor(std::vector<int8_t>(xSize, 0), xShape, ACL_INT8, &y2Addr, &y2), "create y2");
    CHECK_OK(MakeDeviceTensor(std::vector<uint16_t>(xSize, 0), xShape, ACL_FLOAT16, &xAddr, &x), "create x");
    CHECK_OK(MakeDeviceTensor(std::vector<float>(reduceSize, 0.0f), reduceShape, ACL_FLOAT, &scale1Addr, &scale1),
             "create scale1");
    CHECK_OK(MakeDeviceTensor(std::vector<float>(reduceSize, 0.0f), reduceShape, ACL_FLOAT, &scale2Addr, &scale2),
             "create scale2");

    // 3. Phase 1: validate, get the workspace size and an executor (outputMask NULL).
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    CHECK_OK(aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(x1, x2, gamma, smooth1, smooth2, beta, epsilon, nullptr,
                                                           y1, y2, x, scale1, scale2, &workspaceSize, &executor),
             "aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize");

    // 4. Workspace, only when one is needed.
    void* workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        CHECK_OK(aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "allocate workspace");
    }

    // 5. Phase 2: enqueue on the stream, 6. wait for it.
    CHECK_OK(aclnnAddRmsNormDynamicQuantV2(workspaceAddr, workspaceSize, executor, stream),
             "aclnnAddRmsNormDynamicQuantV2");
    CHECK_OK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");

    // 7. y1 back to the host.
    std::vector<int8_t> y1Result(xSize, 0);
    CHECK_OK(aclrtMemcpy(y1Result.data(), y1Result.size() * sizeof(y1Result[0]), y1Addr, xSize * sizeof(int8_t),
                         ACL_MEMCPY_DEVICE_TO_HOST),
             "copy result from device to host");
    for (int64_t i = 0; i < xSize; i++) {
        std::printf("result[%lld] is: %d\n", static_cast<long long>(i), y1Result[i]);
    }

    // 8. Release the tensors, the device memory, then the stream, the device and the runtime.
    aclDestroyTensor(x1);
    aclDestroyTensor(x2);
    aclDestroyTensor(gamma);
    aclDestroyTensor(beta);
    aclDestroyTensor(smooth1);
    aclDestroyTensor(smooth2);
    aclDestroyTensor(y1);
    aclDestroyTensor(y2);
    aclDestroyTensor(x);
    aclDestroyTensor(scale1);
    aclDestroyTensor(scale2);
    aclrtFree(x1Addr);
    aclrtFree(x2Addr);
    aclrtFree(gammaAddr);
    aclrtFree(betaAddr);
    aclrtFree(smooth1Addr);
    aclrtFree(smooth2Addr);
    aclrtFree(y1Addr);
    aclrtFree(y2Addr);
    aclrtFree(xAddr);
    aclrtFree(scale1Addr);
    aclrtFree(scale2Addr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    CHECK_OK(aclrtResetDevice(deviceId), "reset device");
    CHECK_OK(aclFinalize(), "finalize acl");
    return 0;
}
