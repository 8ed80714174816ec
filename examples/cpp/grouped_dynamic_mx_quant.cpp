// aclnnGroupedDynamicMxQuant and aclnnGroupedDynamicMxQuantV2 end to end, on the published example
// (hicann/ops-nn quant/grouped_dynamic_mx_quant docs and examples/arch35, written anew): x is a
// BFLOAT16 [8, 1] column (0, 8, 64, 512) twice, groupIndex [4, 8] makes two groups of four rows, and
// each group is quantised to FLOAT8_E4M3FN with one E8M0 scale per 32-row block.
// Builds unchanged against a CANN toolkit (Ascend950) or against pyaclnn's CPU stub:
//
//   c++ grouped_dynamic_mx_quant.cpp -I<include> -L<lib> -lascendcl -lnnopbase -lopapi -Wl,-rpath,<lib>
//
// Expected for both versions: y bytes 0 72 96 120 0 72 96 120 (0, 4, 32, 256: each group's max 512
// gives the scale 2^(9 - 8) = 2, code 128) and mxscale bytes 128 0 128 0 (the 0 pads each group's odd
// block count to a pair).
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant_v2.h"

#define CHECK_OK(expr, what)                                          \
    do {                                                              \
        auto status_ = (expr);                                        \
        if (status_ != 0) {                                           \
            std::printf("%s failed. ERROR: %d\n", what, (int)status_); \
            return (int)status_;                                      \
        }                                                             \
    } while (0)

// Device buffer holding a copy of `host`, described by a contiguous ND aclTensor of `shape`.
template <typename T>
static int MakeDeviceTensor(const std::vector<T>& host, const std::vector<int64_t>& shape, aclDataType dtype,
                            void** deviceAddr, aclTensor** tensor) {
    size_t bytes = host.size() * sizeof(T);
    CHECK_OK(aclrtMalloc(deviceAddr, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    CHECK_OK(aclrtMemcpy(*deviceAddr, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    *tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    return 0;
}

static void PrintBytes(const char* api, const char* name, const std::vector<uint8_t>& bytes) {
    std::printf("%s %s:", api, name);
    for (uint8_t b : bytes) std::printf(" %d", (int)b);
    std::printf("\n");
}

// One quantisation with either API version: tensors, phase 1, workspace, phase 2, sync, results.
static int RunExample(int version, aclrtStream stream) {
    const char* api = version == 1 ? "aclnnGroupedDynamicMxQuant" : "aclnnGroupedDynamicMxQuantV2";
    const std::vector<int64_t> xShape = {8, 1};
    const std::vector<int64_t> groupIndexShape = {2};
    const std::vector<int64_t> yShape = {8, 1};
    const std::vector<int64_t> mxscaleShape = {2, 1, 2};   // [8 / 64 + 2, 1, 2]
    // bfloat16 bit patterns of 0, 8, 64, 512
    const std::vector<uint16_t> xHost = {0, 16640, 17024, 17408, 0, 16640, 17024, 17408};
    const std::vector<int32_t> groupIndexHost = {4, 8};
    const std::vector<uint8_t> yHost(8, 0);
    const std::vector<uint8_t> mxscaleHost(4, 0);
    void* xAddr = nullptr;
    void* groupIndexAddr = nullptr;
    void* yAddr = nullptr;
    void* mxscaleAddr = nullptr;
    aclTensor* x = nullptr;
    aclTensor* groupIndex = nullptr;
    aclTensor* y = nullptr;
    aclTensor* mxscale = nullptr;
    CHECK_OK(MakeDeviceTensor(xHost, xShape, ACL_BF16, &xAddr, &x), "create x");
    CHECK_OK(MakeDeviceTensor(groupIndexHost, groupIndexShape, ACL_INT32, &groupIndexAddr, &groupIndex),
             "create groupIndex");
    CHECK_OK(MakeDeviceTensor(yHost, yShape, ACL_FLOAT8_E4M3FN, &yAddr, &y), "create y");
    CHECK_OK(MakeDeviceTensor(mxscaleHost, mxscaleShape, ACL_FLOAT8_E8M0, &mxscaleAddr, &mxscale), "create mxscale");

    // Phase 1: validate, get the workspace size and an executor.
    char roundMode[] = "rint";
    const int64_t dstType = ACL_FLOAT8_E4M3FN;
    const int64_t blocksize = 32;
    const int64_t scaleAlg = 0;
    const double dstTypeMax = 0.0;
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    if (version == 1) {
        CHECK_OK(aclnnGroupedDynamicMxQuantGetWorkspaceSize(x, groupIndex, roundMode, dstType, blocksize, y, mxscale,
                                                            &workspaceSize, &executor),
                 "aclnnGroupedDynamicMxQuantGetWorkspaceSize");
    } else {
        CHECK_OK(aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(x, groupIndex, roundMode, dstType, blocksize, scaleAlg,
                                                              dstTypeMax, y, mxscale, &workspaceSize, &executor),
                 "aclnnGroupedDynamicMxQuantV2GetWorkspaceSize");
    }

    // Workspace, only when one is needed.
    void* workspace = nullptr;
    if (workspaceSize > 0) {
        CHECK_OK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "allocate workspace");
    }

    // Phase 2: enqueue on the stream, then wait for it.
    if (version == 1) {
        CHECK_OK(aclnnGroupedDynamicMxQuant(workspace, workspaceSize, executor, stream), api);
    } else {
        CHECK_OK(aclnnGroupedDynamicMxQuantV2(workspace, workspaceSize, executor, stream), api);
    }
    CHECK_OK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");

    // Results back to the host.
    std::vector<uint8_t> yOut(yHost.size(), 0);
    std::vector<uint8_t> mxscaleOut(mxscaleHost.size(), 0);
    CHECK_OK(aclrtMemcpy(yOut.data(), yOut.size(), yAddr, yOut.size(), ACL_MEMCPY_DEVICE_TO_HOST), "copy y");
    CHECK_OK(aclrtMemcpy(mxscaleOut.data(), mxscaleOut.size(), mxscaleAddr, mxscaleOut.size(),
                         ACL_MEMCPY_DEVICE_TO_HOST),
             "copy mxscale");
    PrintBytes(api, "y", yOut);
    PrintBytes(api, "mxscale", mxscaleOut);

    // Release this run's tensors and buffers.
    aclDestroyTensor(x);
    aclDestroyTensor(groupIndex);
    aclDestroyTensor(y);
    aclDestroyTensor(mxscale);
    aclrtFree(xAddr);
    aclrtFree(groupIndexAddr);
    aclrtFree(yAddr);
    aclrtFree(mxscaleAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspace);
    }
    return 0;
}

int main() {
    // Runtime: init, device 0, one stream.
    const int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    CHECK_OK(aclInit(nullptr), "aclInit");
    CHECK_OK(aclrtSetDevice(deviceId), "aclrtSetDevice");
    CHECK_OK(aclrtCreateStream(&stream), "aclrtCreateStream");

    // The same example through both API versions.
    CHECK_OK(RunExample(1, stream), "RunExample(1)");
    CHECK_OK(RunExample(2, stream), "RunExample(2)");

    aclrtDestroyStream(stream);
    CHECK_OK(aclrtResetDevice(deviceId), "reset device");
    CHECK_OK(aclFinalize(), "finalize acl");
    return 0;
}
