// HcclSend / HcclRecv end to end, one process, one thread per device: the same calls, in the same order, with the
// same printed output, as the vendor sample (hicann/hccl examples/01_point_to_point/01_send_recv/main.cc), written anew
// (that sample's licence limits it to systems with Ascend processors, so it is not copied here).
// Builds unchanged against a CANN toolkit or against pyaclnn's CPU stub:
//
//   c++ -std=c++14 hccl_send_recv.cpp -I<include> -L<lib> -lhccl -lascendcl -lpthread -Wl,-rpath,<lib>
//   PYACLNN_STUB_DEVICE_COUNT=2 python -m pyaclnn exec -- ./hccl_send_recv
//
// Each even rank r sends N copies of r (N devices) to rank r + 1, which prints them:
//   Found 2 NPU device(s) available
//   rankId: 1, output: [ 0 0 ]
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include "hccl/hccl.h"
#include "hccl/hccl_types.h"

#define ACL_OK(expr)                                                                          \
    do {                                                                                      \
        int status_ = (int)(expr);                                                            \
        if (status_ != ACL_SUCCESS) {                                                         \
            std::printf("acl interface return err %s:%d, retcode: %d \n", __FILE__, __LINE__, \
                        status_);                                                             \
            return status_;                                                                   \
        }                                                                                     \
    } while (0)

#define HCCL_OK(expr)                                                                          \
    do {                                                                                       \
        int status_ = (int)(expr);                                                             \
        if (status_ != HCCL_SUCCESS) {                                                         \
            std::printf("hccl interface return err %s:%d, retcode: %d \n", __FILE__, __LINE__, \
                        status_);                                                              \
            return status_;                                                                    \
        }                                                                                      \
    } while (0)

struct RankArgs {
    HcclRootInfo *rootInfo;
    uint32_t device;
    uint32_t devCount;
};

// One rank: its device, a communicator from the shared root info, a send (even ranks) or a receive (odd ranks).
static int RunRank(RankArgs *args) {
    const uint32_t device = args->device;
    const uint64_t count = args->devCount;
    const size_t bytes = count * sizeof(float);
    void *sendBuf = nullptr;
    void *recvBuf = nullptr;

    ACL_OK(aclrtSetDevice(static_cast<int32_t>(device)));
    HcclComm comm;
    HCCL_OK(HcclCommInitRootInfo(args->devCount, args->rootInfo, device, &comm));
    aclrtStream stream;
    ACL_OK(aclrtCreateStream(&stream));

    if (device % 2 == 0) {
        // input: this rank's id, count times, staged in host memory
        ACL_OK(aclrtMalloc(&sendBuf, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
        void *host = nullptr;
        ACL_OK(aclrtMallocHost(&host, bytes));
        for (uint64_t i = 0; i < count; ++i) static_cast<float *>(host)[i] = static_cast<float>(device);
        ACL_OK(aclrtMemcpy(sendBuf, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        ACL_OK(aclrtFreeHost(host));
        HCCL_OK(HcclSend(sendBuf, count, HCCL_DATA_TYPE_FP32, device + 1, comm, stream));
    } else {
        ACL_OK(aclrtMalloc(&recvBuf, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
        HCCL_OK(HcclRecv(recvBuf, count, HCCL_DATA_TYPE_FP32, device - 1, comm, stream));
    }
    ACL_OK(aclrtSynchronizeStream(stream));

    if (device % 2 != 0) {
        // receivers print in order: rank r waits r seconds, as the vendor sample does
        std::this_thread::sleep_for(std::chrono::seconds(device));
        void *result = nullptr;
        ACL_OK(aclrtMallocHost(&result, bytes));
        ACL_OK(aclrtMemcpy(result, bytes, recvBuf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        std::cout << "rankId: " << device << ", output: [";
        for (uint64_t i = 0; i < count; ++i) std::cout << " " << static_cast<float *>(result)[i];
        std::cout << " ]" << std::endl;
        ACL_OK(aclrtFreeHost(result));
    }

    HCCL_OK(HcclCommDestroy(comm));
    if (sendBuf != nullptr) ACL_OK(aclrtFree(sendBuf));
    if (recvBuf != nullptr) ACL_OK(aclrtFree(recvBuf));
    ACL_OK(aclrtDestroyStream(stream));
    ACL_OK(aclrtResetDevice(static_cast<int32_t>(device)));
    return 0;
}

int main() {
    ACL_OK(aclInit(nullptr));
    uint32_t devCount = 0;
    ACL_OK(aclrtGetDeviceCount(&devCount));
    std::cout << "Found " << devCount << " NPU device(s) available" << std::endl;

    // rank 0's device makes the root info; every rank thread joins through the same one
    ACL_OK(aclrtSetDevice(0));
    void *rootInfoBuf = nullptr;
    ACL_OK(aclrtMallocHost(&rootInfoBuf, sizeof(HcclRootInfo)));
    HcclRootInfo *rootInfo = static_cast<HcclRootInfo *>(rootInfoBuf);
    HCCL_OK(HcclGetRootInfo(rootInfo));

    std::vector<std::thread> threads(devCount);
    std::vector<RankArgs> args(devCount);
    for (uint32_t i = 0; i < devCount; ++i) {
        args[i] = RankArgs{rootInfo, i, devCount};
        threads[i] = std::thread(RunRank, &args[i]);
    }
    for (uint32_t i = 0; i < devCount; ++i) threads[i].join();

    ACL_OK(aclrtFreeHost(rootInfoBuf));
    ACL_OK(aclFinalize());
    return 0;
}
