// aclnnAmpUpdateScale end to end: the same calls, in the same order, as the vendor sample
// (hicann/ops-math math/amp_update_scale/examples/test_aclnn_amp_update_scale.cpp), written anew.
// Builds unchanged against a CANN toolkit or against pyaclnn's CPU stub:
//
//   c++ amp_update_scale.cpp -I<include> -L<lib> -lascendcl -lnnopbase -lopapi -Wl,-rpath,<lib>
//
// With currentScale 65536, growthTracker 900, foundInf 0, factors 2.0 / 0.5 and interval 1000 the
// tracker just counts up: expected "updatedScale = 65536.000000, updatedGrowthTracker = 901".
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_amp_update_scale.h"

#define CHECK_OK(expr, what)                                          \
    do {                                                              \
        auto status_ = (expr);                                        \
        if (status_ != 0) {                                           \
            std::printf("%s failed. ERROR: %d\n", what, (int)status_); \
            return (int)status_;                                      \
        }                                                             \
    } while (0)

// Device buffer holding a copy of `host`, described by a contiguous ND aclTensor.
template <typename T>
static int MakeDeviceTensor(const std::vector<T>& host, const std::vector<int64_t>& shape, aclDataType dtype,
                            void** deviceAddr, aclTensor** tensor) {
    size_t bytes = sizeof(T);
    for (int64_t dim : shape) bytes *= static_cast<size_t>(dim);
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

    // 2. Inputs and outputs: five one-element tensors.
    const std::vector<int64_t> shape = {1};
    void* scaleAddr = nullptr;
    void* trackerAddr = nullptr;
    void* foundInfAddr = nullptr;
    void* newScaleAddr = nullptr;
    void* newTrackerAddr = nullptr;
    aclTensor* currentScale = nullptr;
    aclTensor* growthTracker = nullptr;
    aclTensor* foundInf = nullptr;
    aclTensor* updatedScale = nullptr;
    aclTensor* updatedGrowthTracker = nullptr;
    CHECK_OK(MakeDeviceTensor(std::vector<float>{65536.0f}, shape, ACL_FLOAT, &scaleAddr, &currentScale),
             "create currentScale");
    CHECK_OK(MakeDeviceTensor(std::vector<int32_t>{900}, shape, ACL_INT32, &trackerAddr, &growthTracker),
             "create growthTracker");
    CHECK_OK(MakeDeviceTensor(std::vector<float>{0.0f}, shape, ACL_FLOAT, &foundInfAddr, &foundInf),
             "create foundInf");
    CHECK_OK(MakeDeviceTensor(std::vector<float>{0.0f}, shape, ACL_FLOAT, &newScaleAddr, &updatedScale),
             "create updatedScale");
    CHECK_OK(MakeDeviceTensor(std::vector<int32_t>{0}, shape, ACL_INT32, &newTrackerAddr, &updatedGrowthTracker),
             "create updatedGrowthTracker");

    // 3. Phase 1: validate, get the workspace size and an executor.
    const float growthFactor = 2.0f;
    const float backoffFactor = 0.5f;
    const int64_t growthInterval = 1000;
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    CHECK_OK(aclnnAmpUpdateScaleGetWorkspaceSize(currentScale, growthTracker, foundInf, growthFactor, backoffFactor,
                                                 growthInterval, updatedScale, updatedGrowthTracker, &workspaceSize,
                                                 &executor),
             "aclnnAmpUpdateScaleGetWorkspaceSize");

    // 4. Workspace, only when one is needed.
    void* workspace = nullptr;
    if (workspaceSize > 0) {
        CHECK_OK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "allocate workspace");
    }

    // 5. Phase 2: enqueue on the stream, 6. wait for it.
    CHECK_OK(aclnnAmpUpdateScale(workspace, workspaceSize, executor, stream), "aclnnAmpUpdateScale");
    CHECK_OK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");

    // 7. Results back to the host.
    float newScale = 0.0f;
    int32_t newTracker = 0;
    CHECK_OK(aclrtMemcpy(&newScale, sizeof newScale, newScaleAddr, sizeof newScale, ACL_MEMCPY_DEVICE_TO_HOST),
             "copy updatedScale");
    CHECK_OK(aclrtMemcpy(&newTracker, sizeof newTracker, newTrackerAddr, sizeof newTracker,
                         ACL_MEMCPY_DEVICE_TO_HOST),
             "copy updatedGrowthTracker");
    std::printf("aclnnAmpUpdateScale result: updatedScale = %f, updatedGrowthTracker = %d\n", newScale, newTracker);

    // 8. Release everything, then the device and the runtime.
    aclDestroyTensor(currentScale);
    aclDestroyTensor(growthTracker);
    aclDestroyTensor(foundInf);
    aclDestroyTensor(updatedScale);
    aclDestroyTensor(updatedGrowthTracker);
    aclrtFree(scaleAddr);
    aclrtFree(trackerAddr);
    aclrtFree(foundInfAddr);
    aclrtFree(newScaleAddr);
    aclrtFree(newTrackerAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspace);
    }
    aclrtDestroyStream(stream);
    CHECK_OK(aclrtResetDevice(deviceId), "reset device");
    CHECK_OK(aclFinalize(), "finalize acl");
    return 0;
}
