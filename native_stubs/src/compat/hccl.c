/*
 * libhccl.so: CANN's collective communication library (Hccl*), emulated across CPU processes.
 *
 * torch_npu looks Hccl* up by name when a process group is used (docs/hccl.md has the traced sequence).
 * Prototypes and codes are the vendor's (hccl/hccl.h, hccl/hccl_types.h of the torch-npu wheel). The data
 * moves through torch's gloo, reached in the same process through pyaclnn/_hccl.py: docs/hccl.md says why
 * (measured). So the collectives need a Python process with torch (any torch_npu process is one); elsewhere
 * they answer HCCL_E_NOT_SUPPORT.
 *
 * Stream order: a collective first waits for the caller's stream to run its earlier work, then runs in the
 * calling thread (the GIL is taken there: the stream's worker thread could deadlock with a caller that holds
 * the GIL while it synchronizes). Work queued after the call runs after it; there is no overlap.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "../common/handle_registry.h"

typedef enum {
    HCCL_SUCCESS = 0, HCCL_E_PARA = 1, HCCL_E_PTR = 2, HCCL_E_MEMORY = 3, HCCL_E_INTERNAL = 4,
    HCCL_E_NOT_SUPPORT = 5, HCCL_E_NOT_FOUND = 6, HCCL_E_UNAVAIL = 7, HCCL_E_SYSCALL = 8, HCCL_E_TIMEOUT = 9,
    HCCL_E_OPEN_FILE_FAILURE = 10, HCCL_E_TCP_CONNECT = 11, HCCL_E_ROCE_CONNECT = 12, HCCL_E_TCP_TRANSFER = 13,
    HCCL_E_ROCE_TRANSFER = 14, HCCL_E_RUNTIME = 15, HCCL_E_DRV = 16, HCCL_E_PROFILING = 17, HCCL_E_CCE = 18,
    HCCL_E_NETWORK = 19, HCCL_E_AGAIN = 20, HCCL_E_REMOTE = 21, HCCL_E_SUSPENDING = 22, HCCL_E_OPRETRY_FAIL = 23,
    HCCL_E_OOM = 24, HCCL_E_RESERVED
} HcclResult;
typedef void *HcclComm;
typedef enum { HCCL_REDUCE_SUM = 0, HCCL_REDUCE_PROD = 1, HCCL_REDUCE_MAX = 2, HCCL_REDUCE_MIN = 3 } HcclReduceOp;
typedef int HcclDataType;
#define HCCL_ROOT_INFO_BYTES 4108
#define COMM_NAME_MAX_LENGTH 128
typedef struct HcclRootInfoDef { char internal[HCCL_ROOT_INFO_BYTES]; } HcclRootInfo;
/* HcclCommConfigDef's head: the 24-byte header HcclCommConfigInit writes, then the fields we read. */
typedef struct {
    size_t size;
    uint32_t magicWord, version;
    uint64_t reserved;
    uint32_t hcclBufferSize, hcclDeterministic;
    char hcclCommName[COMM_NAME_MAX_LENGTH];
} HcclCommConfigHead;
#define HCCL_COMM_CONFIG_MAGIC_WORD 0xf0f0f0f0u
#define HCCL_COMM_CONFIG_RESERVED 12u

#define HCCL_API __attribute__((visibility("default")))

/* ---- the CPython calls we make (looked up in the process: no link-time dependency on libpython) ---- */
typedef struct PyObject PyObject;
static struct {
    int ok;
    int (*IsInitialized)(void);
    int (*GILState_Ensure)(void);
    void (*GILState_Release)(int);
    PyObject *(*Import)(const char *);
    PyObject *(*CallMethod)(PyObject *, const char *, const char *, ...);
    long long (*AsLongLong)(PyObject *);
    void (*DecRef)(PyObject *);
    void (*ErrPrint)(void);
} py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void py_lookup(void)
{
    py.IsInitialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    py.GILState_Ensure = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
    py.GILState_Release = (void (*)(int))dlsym(RTLD_DEFAULT, "PyGILState_Release");
    py.Import = (PyObject * (*)(const char *)) dlsym(RTLD_DEFAULT, "PyImport_ImportModule");
    py.CallMethod = (PyObject * (*)(PyObject *, const char *, const char *, ...)) dlsym(RTLD_DEFAULT, "PyObject_CallMethod");
    py.AsLongLong = (long long (*)(PyObject *))dlsym(RTLD_DEFAULT, "PyLong_AsLongLong");
    py.DecRef = (void (*)(PyObject *))dlsym(RTLD_DEFAULT, "Py_DecRef");
    py.ErrPrint = (void (*)(void))dlsym(RTLD_DEFAULT, "PyErr_Print");
    py.ok = py.IsInitialized && py.GILState_Ensure && py.GILState_Release && py.Import && py.CallMethod &&
            py.AsLongLong && py.DecRef && py.ErrPrint && py.IsInitialized();
}

/* Calls pyaclnn._hccl.<fn>(a[0], ..., a[n-1]) with the GIL (values as C long long: addresses, counts and ids
 * fit); its int result, or -HCCL_E_NOT_SUPPORT without Python, -HCCL_E_INTERNAL if Python raised. */
static long long transport(const char *func, const char *fn, int n, long long a0, long long a1, long long a2,
                           long long a3, long long a4, long long a5)
{
    static const char *const formats[] = {"()", "(L)", "(LL)", "(LLL)", "(LLLL)", "(LLLLL)", "(LLLLLL)"};
    pthread_once(&py_once, py_lookup);
    if (!py.ok) {
        fprintf(stderr, "pyaclnn-hccl: %s: the emulated HCCL moves data through torch's gloo and needs a Python "
                        "process with torch\n", func);
        return -HCCL_E_NOT_SUPPORT;
    }
    long long r = -HCCL_E_INTERNAL;
    int gil = py.GILState_Ensure();
    PyObject *module = py.Import("pyaclnn._hccl");
    /* Extra variadic arguments beyond the format are never read. */
    PyObject *value = module ? py.CallMethod(module, fn, formats[n], a0, a1, a2, a3, a4, a5) : NULL;
    if (value != NULL) {
        r = py.AsLongLong(value);
        py.DecRef(value);
    } else {
        py.ErrPrint();
    }
    if (module != NULL) py.DecRef(module);
    py.GILState_Release(gil);
    return r;
}
#define ADDR(p) ((long long)(uintptr_t)(p))

/* ---- communicators ----------------------------------------------------------------------------------- */
typedef struct {
    uint32_t nranks, rank;
    long long id;                  /* pyaclnn._hccl's */
    int async_error;
    char name[COMM_NAME_MAX_LENGTH];
} Comm;

/* The live communicators: a handle is checked against this set, never dereferenced first (a destroyed or foreign
 * pointer is HCCL_E_PARA, not a read of freed memory). */
static stub_registry comms = STUB_REGISTRY_INIT;
enum { KIND_COMM = 1 };

static Comm *comm_of(HcclComm handle)
{
    return handle && stub_registry_kind(&comms, handle) == KIND_COMM ? (Comm *)handle : NULL;
}

/* A query's communicator and out-pointer: HCCL_E_PTR for NULL, HCCL_E_PARA for a handle that is not a live
 * communicator. */
static HcclResult comm_and_out(HcclComm comm, const void *out, Comm **c)
{
    if (comm == NULL || out == NULL) return HCCL_E_PTR;
    *c = comm_of(comm);
    return *c != NULL ? HCCL_SUCCESS : HCCL_E_PARA;
}

HCCL_API HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
    if (rootInfo == NULL) return HCCL_E_PTR;
    long long r = transport("HcclGetRootInfo", "get_root_info", 1, ADDR(rootInfo), 0, 0, 0, 0, 0);
    return (HcclResult)(r < 0 ? -r : r);
}

static HcclResult init_comm(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, const char *name,
                            HcclComm *comm)
{
    if (rootInfo == NULL || comm == NULL) return HCCL_E_PTR;
    if (nRanks == 0 || rank >= nRanks) return HCCL_E_PARA;
    long long id = transport("HcclCommInitRootInfo", "comm_init", 3, ADDR(rootInfo), nRanks, rank, 0, 0, 0);
    if (id <= 0) return (HcclResult)(id < 0 ? -id : HCCL_E_INTERNAL);
    Comm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        (void)transport("HcclCommInitRootInfo", "comm_destroy", 1, id, 0, 0, 0, 0, 0);
        return HCCL_E_MEMORY;
    }
    *c = (Comm){.nranks = nRanks, .rank = rank, .id = id};
    if (stub_registry_add(&comms, c, KIND_COMM) != 0) {
        (void)transport("HcclCommInitRootInfo", "comm_destroy", 1, id, 0, 0, 0, 0, 0);
        free(c);
        return HCCL_E_MEMORY;
    }
    if (name != NULL && name[0] != '\0')
        snprintf(c->name, sizeof c->name, "%s", name);
    else
        snprintf(c->name, sizeof c->name, "pyaclnn_hccl_comm_%lld", id);
    *comm = c;
    return HCCL_SUCCESS;
}

HCCL_API HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                         HcclComm *comm)
{
    return init_comm(nRanks, rootInfo, rank, NULL, comm);
}

HCCL_API HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                               const void *config, HcclComm *comm)
{
    if (config == NULL) return HCCL_E_PTR;
    const HcclCommConfigHead *head = config;
    /* A config HcclCommConfigInit did not prepare is refused, as by CANN (magic word and size). */
    if (head->magicWord != HCCL_COMM_CONFIG_MAGIC_WORD || head->size < sizeof *head) return HCCL_E_PARA;
    char name[COMM_NAME_MAX_LENGTH];
    memcpy(name, head->hcclCommName, sizeof name);
    name[sizeof name - 1] = '\0';
    return init_comm(nRanks, rootInfo, rank, name, comm);
}

/* Every config field torch_npu may set is accepted (only the name is used). */
HCCL_API uint32_t HcclGetCommConfigCapability(void) { return HCCL_COMM_CONFIG_RESERVED; }

HCCL_API HcclResult HcclCommDestroy(HcclComm comm)
{
    if (comm == NULL) return HCCL_E_PTR;
    /* removed once: a second destroy (or a racing one) finds it gone */
    if (!stub_registry_remove(&comms, comm, KIND_COMM)) return HCCL_E_PARA;
    Comm *c = (Comm *)comm;
    (void)transport("HcclCommDestroy", "comm_destroy", 1, c->id, 0, 0, 0, 0, 0);
    free(c);
    return HCCL_SUCCESS;
}

HCCL_API HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)
{
    Comm *c;
    HcclResult r = comm_and_out(comm, rankSize, &c);
    if (r != HCCL_SUCCESS) return r;
    *rankSize = c->nranks;
    return HCCL_SUCCESS;
}

HCCL_API HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)
{
    Comm *c;
    HcclResult r = comm_and_out(comm, rank, &c);
    if (r != HCCL_SUCCESS) return r;
    *rank = c->rank;
    return HCCL_SUCCESS;
}

HCCL_API HcclResult HcclGetCommName(HcclComm comm, char *commName)
{
    Comm *c;
    HcclResult r = comm_and_out(comm, commName, &c);
    if (r != HCCL_SUCCESS) return r;
    memcpy(commName, c->name, COMM_NAME_MAX_LENGTH);
    return HCCL_SUCCESS;
}

HCCL_API HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError)
{
    Comm *c;
    HcclResult r = comm_and_out(comm, asyncError, &c);
    if (r != HCCL_SUCCESS) return r;
    *asyncError = (HcclResult)c->async_error; /* collectives run synchronously: their errors are returned */
    return HCCL_SUCCESS;
}

/* ---- collectives ------------------------------------------------------------------------------------- */
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

/* The checks every collective shares, then the caller's stream is drained so the data is ready. */
static HcclResult prepare(const char *func, Comm **out, HcclComm comm, HcclDataType dtype, const void *buf,
                          uint64_t count, aclrtStream stream)
{
    Comm *c = comm_of(comm);
    if (comm == NULL) return HCCL_E_PTR;
    if (c == NULL) return HCCL_E_PARA;
    if (count > 0 && buf == NULL) return HCCL_E_PTR;
    if (dtype_size(dtype) == 0) {
        fprintf(stderr, "pyaclnn-hccl: %s: data type %d is not supported by the emulated HCCL\n", func, dtype);
        return HCCL_E_NOT_SUPPORT;
    }
    aclError e = aclrtSynchronizeStream(stream);
    if (e != ACL_SUCCESS) {
        fprintf(stderr, "pyaclnn-hccl: %s: the stream's earlier work failed (acl error %d)\n", func, (int)e);
        return HCCL_E_RUNTIME;
    }
    *out = c;
    return HCCL_SUCCESS;
}

static int op_valid(HcclReduceOp op) { return (unsigned)op <= HCCL_REDUCE_MIN; }

static HcclResult finish(Comm *c, long long r)
{
    HcclResult code = (HcclResult)(r < 0 ? -r : r);
    if (code != HCCL_SUCCESS) c->async_error = code;
    return code;
}

HCCL_API HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                  HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    Comm *c;
    if (!op_valid(op)) return HCCL_E_PARA;
    if (count > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult p = prepare("HcclAllReduce", &c, comm, dataType, recvBuf, count, stream);
    if (p != HCCL_SUCCESS) return p;
    return finish(c, transport("HcclAllReduce", "all_reduce", 6, ADDR(sendBuf), ADDR(recvBuf),
                               (long long)count, dataType, op, c->id));
}

HCCL_API HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                  aclrtStream stream)
{
    Comm *c;
    HcclResult p = prepare("HcclBroadcast", &c, comm, dataType, buf, count, stream);
    if (p != HCCL_SUCCESS) return p;
    if (root >= c->nranks) return HCCL_E_PARA;
    return finish(c, transport("HcclBroadcast", "broadcast", 5, ADDR(buf), (long long)count, dataType,
                               root, c->id, 0));
}

HCCL_API HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                                  HcclComm comm, aclrtStream stream)
{
    Comm *c;
    if (sendCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult p = prepare("HcclAllGather", &c, comm, dataType, recvBuf, sendCount, stream);
    if (p != HCCL_SUCCESS) return p;
    return finish(c, transport("HcclAllGather", "all_gather", 5, ADDR(sendBuf), ADDR(recvBuf), (long long)sendCount,
                               dataType, c->id, 0));
}

HCCL_API HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                      HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    Comm *c;
    if (!op_valid(op)) return HCCL_E_PARA;
    if (recvCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult p = prepare("HcclReduceScatter", &c, comm, dataType, recvBuf, recvCount, stream);
    if (p != HCCL_SUCCESS) return p;
    return finish(c, transport("HcclReduceScatter", "reduce_scatter", 6, ADDR(sendBuf), ADDR(recvBuf),
                               (long long)recvCount, dataType, op, c->id));
}

/* Equal blocks only: sendCount elements to each rank, recvCount from each, one dtype. */
HCCL_API HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType, const void *recvBuf,
                                 uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream)
{
    Comm *c;
    if (sendCount != recvCount || sendType != recvType) return HCCL_E_PARA;
    if (sendCount > 0 && sendBuf == NULL) return HCCL_E_PTR;
    HcclResult p = prepare("HcclAlltoAll", &c, comm, sendType, recvBuf, recvCount, stream);
    if (p != HCCL_SUCCESS) return p;
    return finish(c, transport("HcclAlltoAll", "all_to_all", 5, ADDR(sendBuf), ADDR(recvBuf), (long long)sendCount,
                               sendType, c->id, 0));
}

static HcclResult point_to_point(const char *func, const char *fn, void *buf, uint64_t count, HcclDataType dataType,
                                 uint32_t peer, HcclComm comm, aclrtStream stream)
{
    Comm *c;
    HcclResult p = prepare(func, &c, comm, dataType, buf, count, stream);
    if (p != HCCL_SUCCESS) return p;
    if (peer >= c->nranks || peer == c->rank) return HCCL_E_PARA;
    return finish(c, transport(func, fn, 5, ADDR(buf), (long long)count, dataType, peer, c->id, 0));
}

HCCL_API HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                             aclrtStream stream)
{
    return point_to_point("HcclSend", "send", sendBuf, count, dataType, destRank, comm, stream);
}

HCCL_API HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                             aclrtStream stream)
{
    return point_to_point("HcclRecv", "recv", recvBuf, count, dataType, srcRank, comm, stream);
}

HCCL_API HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)
{
    Comm *c;
    HcclResult p = prepare("HcclBarrier", &c, comm, 4, NULL, 0, stream);
    if (p != HCCL_SUCCESS) return p;
    return finish(c, transport("HcclBarrier", "barrier", 1, c->id, 0, 0, 0, 0, 0));
}

/* The vendor's enum comments (hccl_types.h), which is what the codes mean. */
HCCL_API const char *HcclGetErrorString(HcclResult code)
{
    static const char *const text[] = {
        "success", "parameter error", "empty pointer", "memory error", "internal error", "not support feature",
        "not found specific resource", "resource unavailable", "call system interface error", "timeout",
        "open file fail", "tcp connect fail", "roce connect fail", "tcp transfer fail", "roce transfer fail",
        "call runtime api fail", "call driver api fail", "call profiling api fail", "call cce api fail",
        "call network api fail", "try again", "error cqe", "error communicator suspending", "retry constraint",
        "out of memory",
    };
    if ((unsigned)code < sizeof text / sizeof text[0]) return text[code];
    return "unknown error";
}
