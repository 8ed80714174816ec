/*
 * The collectives of the emulated libhccl: each checks its arguments (HCCL's codes), then queues itself on the
 * caller's stream (hccl_task.c) with the bytes it reads and writes, and returns. Prototypes are the vendor's
 * (hccl/hccl.h of the torch-npu wheel); the data moves in pyaclnn/_hccl.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hccl_internal.h"

#define HCCL_API __attribute__((visibility("default")))
#define ADDR(p) ((long long)(uintptr_t)(p))

static int dtype_size(HcclDataType t)
{
    switch (t) {
    case 0: case 7: return 1;           /* INT8, UINT8 */
    case 3: case 11: return 2;          /* FP16, BFP16 */
    case 2: case 4: return 4;           /* INT32, FP32 */
    case 5: case 10: return 8;          /* INT64, FP64 */
    default: return 0;                  /* gloo has no such type (int16, unsigned 16/32/64, int128, fp8) */
    }
}

/* The checks every collective shares: the communicator, the buffer, the data type. */
static HcclResult check(const char *func, hccl_comm **out, HcclComm comm, HcclDataType dtype, const void *buf,
                        uint64_t count)
{
    hccl_comm *c = hccl_comm_of(comm);
    if (comm == NULL) return HCCL_E_PTR;
    if (c == NULL) return HCCL_E_PARA;
    if (count > 0 && buf == NULL) return HCCL_E_PTR;
    if (dtype_size(dtype) == 0) {
        fprintf(stderr, "pyaclnn-hccl: %s: data type %d is not supported by the emulated HCCL\n", func, dtype);
        return HCCL_E_NOT_SUPPORT;
    }
    *out = c;
    return HCCL_SUCCESS;
}

static int op_valid(HcclReduceOp op) { return (unsigned)op <= HCCL_REDUCE_MIN; }

static pyaclnn_stub_access reads(const void *p, uint64_t n) { return (pyaclnn_stub_access){p, n, 0}; }
static pyaclnn_stub_access writes(const void *p, uint64_t n) { return (pyaclnn_stub_access){p, n, 1}; }

HCCL_API HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                  HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (!op_valid(op)) return HCCL_E_PARA;
    if (count > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclAllReduce", &c, comm, dataType, recvBuf, count);
    if (r != HCCL_SUCCESS) return r;
    uint64_t bytes = count * dtype_size(dataType);
    pyaclnn_stub_access acc[2] = {reads(sendBuf, bytes), writes(recvBuf, bytes)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)count, dataType, op, c->id};
    return hccl_submit("HcclAllReduce", comm, HCCL_KIND_ALL_REDUCE, a, NULL, 0, acc, 2, stream);
}

HCCL_API HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                               HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (!op_valid(op)) return HCCL_E_PARA;
    if (count > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclReduce", &c, comm, dataType, recvBuf, count);
    if (r != HCCL_SUCCESS) return r;
    if (root >= c->nranks) return HCCL_E_PARA;
    uint64_t bytes = count * dtype_size(dataType);
    /* only the root's receive buffer is written */
    pyaclnn_stub_access acc[2] = {reads(sendBuf, bytes), writes(recvBuf, bytes)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)count, dataType, op, root, c->id};
    return hccl_submit("HcclReduce", comm, HCCL_KIND_REDUCE, a, NULL, 0, acc, 1 + (root == c->rank), stream);
}

HCCL_API HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                  aclrtStream stream)
{
    hccl_comm *c;
    HcclResult r = check("HcclBroadcast", &c, comm, dataType, buf, count);
    if (r != HCCL_SUCCESS) return r;
    if (root >= c->nranks) return HCCL_E_PARA;
    pyaclnn_stub_access acc = (root == c->rank ? reads : writes)(buf, count * dtype_size(dataType));
    long long a[HCCL_TASK_ARGS] = {ADDR(buf), (long long)count, dataType, root, c->id};
    return hccl_submit("HcclBroadcast", comm, HCCL_KIND_BROADCAST, a, NULL, 0, &acc, 1, stream);
}

HCCL_API HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                uint32_t root, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    HcclResult r = check("HcclScatter", &c, comm, dataType, recvBuf, recvCount);
    if (r != HCCL_SUCCESS) return r;
    if (root >= c->nranks) return HCCL_E_PARA;
    int is_root = root == c->rank;
    if (is_root && recvCount > 0 && sendBuf == NULL) return HCCL_E_PTR;   /* only the root's is read */
    uint64_t bytes = recvCount * dtype_size(dataType);
    pyaclnn_stub_access acc[2] = {writes(recvBuf, bytes), reads(sendBuf, bytes * c->nranks)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)recvCount, dataType, root, c->id};
    return hccl_submit("HcclScatter", comm, HCCL_KIND_SCATTER, a, NULL, 0, acc, 1 + is_root, stream);
}

HCCL_API HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                                  HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (sendCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclAllGather", &c, comm, dataType, recvBuf, sendCount);
    if (r != HCCL_SUCCESS) return r;
    uint64_t bytes = sendCount * dtype_size(dataType);
    pyaclnn_stub_access acc[2] = {reads(sendBuf, bytes), writes(recvBuf, bytes * c->nranks)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)sendCount, dataType, c->id};
    return hccl_submit("HcclAllGather", comm, HCCL_KIND_ALL_GATHER, a, NULL, 0, acc, 2, stream);
}

HCCL_API HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                      HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (!op_valid(op)) return HCCL_E_PARA;
    if (recvCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclReduceScatter", &c, comm, dataType, recvBuf, recvCount);
    if (r != HCCL_SUCCESS) return r;
    uint64_t bytes = recvCount * dtype_size(dataType);
    pyaclnn_stub_access acc[2] = {reads(sendBuf, bytes * c->nranks), writes(recvBuf, bytes)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)recvCount, dataType, op, c->id};
    return hccl_submit("HcclReduceScatter", comm, HCCL_KIND_REDUCE_SCATTER, a, NULL, 0, acc, 2, stream);
}

/* Equal blocks only: sendCount elements to each rank, recvCount from each, one dtype. */
HCCL_API HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType, const void *recvBuf,
                                 uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (sendCount != recvCount || sendType != recvType) return HCCL_E_PARA;
    if (sendCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclAlltoAll", &c, comm, sendType, recvBuf, recvCount);
    if (r != HCCL_SUCCESS) return r;
    uint64_t bytes = sendCount * dtype_size(sendType) * c->nranks;
    pyaclnn_stub_access acc[2] = {reads(sendBuf, bytes), writes(recvBuf, bytes)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)sendCount, sendType, c->id};
    return hccl_submit("HcclAlltoAll", comm, HCCL_KIND_ALL_TO_ALL, a, NULL, 0, acc, 2, stream);
}

/* The end of the furthest block of a counts / displacements pair, in elements. */
static uint64_t extent(const uint64_t *counts, const uint64_t *displs, uint32_t n)
{
    uint64_t end = 0;
    for (uint32_t i = 0; i < n; i++)
        if (counts[i] && displs[i] + counts[i] > end) end = displs[i] + counts[i];
    return end;
}

/* Queues an all-to-all-V whose extra holds {send counts, send displs, recv counts, recv displs} (4 x nranks, freed
 * here whatever happens); send_end / recv_end: the elements each buffer spans. */
static HcclResult submit_all_to_all_v(const char *func, HcclComm comm, const hccl_comm *c, const void *sendBuf,
                                      const void *recvBuf, HcclDataType type, uint64_t *extra, uint64_t send_end,
                                      uint64_t recv_end, aclrtStream stream)
{
    if ((send_end && sendBuf == NULL) || (recv_end && recvBuf == NULL)) {
        free(extra);
        return HCCL_E_PTR;
    }
    int size = dtype_size(type);
    pyaclnn_stub_access acc[2] = {reads(sendBuf, send_end * size), writes(recvBuf, recv_end * size)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), type, c->id};
    HcclResult r = hccl_submit(func, comm, HCCL_KIND_ALL_TO_ALL_V, a, extra, 4 * c->nranks, acc, 2, stream);
    free(extra);
    return r;
}

/* counts and displacements are uint64_t arrays of one entry per rank (torch_npu passes std::vector<uint64_t>). */
HCCL_API HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                                  HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                                  const void *rdispls, HcclDataType recvType, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (sendCounts == NULL || sdispls == NULL || recvCounts == NULL || rdispls == NULL) return HCCL_E_PTR;
    if (sendType != recvType) return HCCL_E_PARA;   /* gloo moves one type */
    HcclResult r = check("HcclAlltoAllV", &c, comm, sendType, recvBuf, 0);
    if (r != HCCL_SUCCESS) return r;
    uint32_t n = c->nranks;
    uint64_t *extra = malloc(4 * n * sizeof *extra);
    if (extra == NULL) return HCCL_E_MEMORY;
    memcpy(extra, sendCounts, n * sizeof *extra);
    memcpy(extra + n, sdispls, n * sizeof *extra);
    memcpy(extra + 2 * n, recvCounts, n * sizeof *extra);
    memcpy(extra + 3 * n, rdispls, n * sizeof *extra);
    uint64_t send_end = extent(extra, extra + n, n), recv_end = extent(extra + 2 * n, extra + 3 * n, n);
    return submit_all_to_all_v("HcclAlltoAllV", comm, c, sendBuf, recvBuf, sendType, extra, send_end, recv_end,
                               stream);
}

/* sendCountMatrix: n x n, row-major, [i][j] = elements rank i sends to rank j, the same on every rank (torch_npu passes
 * std::vector<int64_t>); blocks are packed in rank order on both sides. Queued as the all-to-all-V it is. */
HCCL_API HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix, HcclDataType sendType,
                                   const void *recvBuf, HcclDataType recvType, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (sendCountMatrix == NULL) return HCCL_E_PTR;
    if (sendType != recvType) return HCCL_E_PARA;   /* gloo moves one type */
    HcclResult r = check("HcclAlltoAllVC", &c, comm, sendType, recvBuf, 0);
    if (r != HCCL_SUCCESS) return r;
    uint32_t n = c->nranks, me = c->rank;
    const uint64_t *matrix = sendCountMatrix;
    uint64_t *extra = malloc(4 * n * sizeof *extra);
    if (extra == NULL) return HCCL_E_MEMORY;
    uint64_t send_end = 0, recv_end = 0;
    for (uint32_t j = 0; j < n; j++) {   /* {send counts, send displs, recv counts, recv displs} */
        extra[j] = matrix[(size_t)me * n + j];
        extra[n + j] = send_end;
        send_end += extra[j];
        extra[2 * n + j] = matrix[(size_t)j * n + me];
        extra[3 * n + j] = recv_end;
        recv_end += extra[2 * n + j];
    }
    return submit_all_to_all_v("HcclAlltoAllVC", comm, c, sendBuf, recvBuf, sendType, extra, send_end, recv_end,
                               stream);
}

HCCL_API HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf, const void *recvCounts,
                                   const void *recvDispls, HcclDataType dataType, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    if (recvCounts == NULL || recvDispls == NULL) return HCCL_E_PTR;
    if (sendCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclAllGatherV", &c, comm, dataType, recvBuf, 0);
    if (r != HCCL_SUCCESS) return r;
    uint32_t n = c->nranks;
    const uint64_t *counts = recvCounts, *displs = recvDispls;
    if (counts[c->rank] != sendCount) return HCCL_E_PARA;   /* this rank's block is what it sends */
    uint64_t end = extent(counts, displs, n);
    if (end && recvBuf == NULL) return HCCL_E_PTR;
    uint64_t *extra = malloc(2 * n * sizeof *extra);
    if (extra == NULL) return HCCL_E_MEMORY;
    memcpy(extra, counts, n * sizeof *extra);
    memcpy(extra + n, displs, n * sizeof *extra);
    int size = dtype_size(dataType);
    pyaclnn_stub_access acc[2] = {reads(sendBuf, sendCount * size), writes(recvBuf, end * size)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)sendCount, dataType, c->id};
    r = hccl_submit("HcclAllGatherV", comm, HCCL_KIND_ALL_GATHER_V, a, extra, 2 * n, acc, 2, stream);
    free(extra);
    return r;
}

HCCL_API HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls, void *recvBuf,
                                       uint64_t recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                       aclrtStream stream)
{
    hccl_comm *c;
    if (!op_valid(op)) return HCCL_E_PARA;
    if (sendCounts == NULL || sendDispls == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclReduceScatterV", &c, comm, dataType, recvBuf, recvCount);
    if (r != HCCL_SUCCESS) return r;
    uint32_t n = c->nranks;
    const uint64_t *counts = sendCounts, *displs = sendDispls;
    if (counts[c->rank] != recvCount) return HCCL_E_PARA;   /* this rank receives its own block */
    uint64_t end = extent(counts, displs, n);
    if (end && sendBuf == NULL) return HCCL_E_PTR;
    uint64_t *extra = malloc(2 * n * sizeof *extra);
    if (extra == NULL) return HCCL_E_MEMORY;
    memcpy(extra, counts, n * sizeof *extra);
    memcpy(extra + n, displs, n * sizeof *extra);
    int size = dtype_size(dataType);
    pyaclnn_stub_access acc[2] = {reads(sendBuf, end * size), writes(recvBuf, recvCount * size)};
    long long a[HCCL_TASK_ARGS] = {ADDR(sendBuf), ADDR(recvBuf), (long long)recvCount, dataType, op, c->id};
    r = hccl_submit("HcclReduceScatterV", comm, HCCL_KIND_REDUCE_SCATTER_V, a, extra, 2 * n, acc, 2, stream);
    free(extra);
    return r;
}

static HcclResult point_to_point(const char *func, int kind, void *buf, uint64_t count, HcclDataType dataType,
                                 uint32_t peer, HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    HcclResult r = check(func, &c, comm, dataType, buf, count);
    if (r != HCCL_SUCCESS) return r;
    if (peer >= c->nranks || peer == c->rank) return HCCL_E_PARA;
    pyaclnn_stub_access acc = (kind == HCCL_KIND_SEND ? reads : writes)(buf, count * dtype_size(dataType));
    long long a[HCCL_TASK_ARGS] = {ADDR(buf), (long long)count, dataType, peer, c->id};
    return hccl_submit(func, comm, kind, a, NULL, 0, &acc, 1, stream);
}

HCCL_API HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                             aclrtStream stream)
{
    return point_to_point("HcclSend", HCCL_KIND_SEND, sendBuf, count, dataType, destRank, comm, stream);
}

HCCL_API HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                             aclrtStream stream)
{
    return point_to_point("HcclRecv", HCCL_KIND_RECV, recvBuf, count, dataType, srcRank, comm, stream);
}

/* Each item is checked like an HcclSend / HcclRecv; the transport posts them all, then waits for all. */
HCCL_API HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                      aclrtStream stream)
{
    hccl_comm *c;
    if (itemNum > 0 && sendRecvInfo == NULL) return HCCL_E_PTR;
    HcclResult r = check("HcclBatchSendRecv", &c, comm, 4, NULL, 0);
    if (r != HCCL_SUCCESS) return r;
    for (uint32_t i = 0; i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if ((unsigned)it->sendRecvType > HCCL_RECV) return HCCL_E_PARA;
        if ((r = check("HcclBatchSendRecv", &c, comm, it->dataType, it->buf, it->count)) != HCCL_SUCCESS) return r;
        if (it->remoteRank >= c->nranks || it->remoteRank == c->rank) return HCCL_E_PARA;
    }
    uint64_t *extra = malloc((size_t)itemNum * 5 * sizeof *extra + 1);
    pyaclnn_stub_access *acc = malloc((size_t)itemNum * sizeof *acc + 1);
    if (extra == NULL || acc == NULL) {
        free(extra);
        free(acc);
        return HCCL_E_MEMORY;
    }
    for (uint32_t i = 0; i < itemNum; i++) {   /* {type, buf, count, dtype, peer} per item */
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        uint64_t *e = extra + 5 * (size_t)i;
        e[0] = it->sendRecvType, e[1] = (uintptr_t)it->buf, e[2] = it->count, e[3] = (uint64_t)it->dataType;
        e[4] = it->remoteRank;
        acc[i] = (it->sendRecvType == HCCL_SEND ? reads : writes)(it->buf, it->count * dtype_size(it->dataType));
    }
    long long a[HCCL_TASK_ARGS] = {c->id};
    r = hccl_submit("HcclBatchSendRecv", comm, HCCL_KIND_BATCH_SEND_RECV, a, extra, 5 * (size_t)itemNum, acc,
                    itemNum, stream);
    free(extra);
    free(acc);
    return r;
}

HCCL_API HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)
{
    hccl_comm *c;
    HcclResult r = check("HcclBarrier", &c, comm, 4, NULL, 0);
    if (r != HCCL_SUCCESS) return r;
    long long a[HCCL_TASK_ARGS] = {c->id};
    return hccl_submit("HcclBarrier", comm, HCCL_KIND_BARRIER, a, NULL, 0, NULL, 0, stream);
}
