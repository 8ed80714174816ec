/*
 * libhccl.so: CANN's collective communication library (Hccl*), emulated across CPU processes.
 *
 * torch_npu looks Hccl* up by name when a process group is used (docs/hccl.md has the traced sequence).
 * Prototypes and codes are the vendor's (hccl/hccl.h, hccl/hccl_types.h of the torch-npu wheel). The data
 * moves through torch's gloo, reached in the same process through pyaclnn/_hccl.py: docs/hccl.md says why
 * (measured). So the collectives need Python with torch: a torch_npu process has it; a C program run under
 * `python -m pyaclnn exec` gets that interpreter started inside it (py_embed); elsewhere they answer
 * HCCL_E_NOT_SUPPORT.
 *
 * Stream order: a collective is a task of the caller's stream (hccl_task.c), run by the transport thread when
 * the stream reaches it; the call only checks its arguments and queues it.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "hccl_internal.h"
#include "../common/handle_registry.h"

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

/* Why the collectives are unavailable, for the message (set by py_lookup). */
static char py_missing[320];

/* A program without Python (the vendor's C++ samples: one thread per device) gets an interpreter started in the
 * process, the one `python -m pyaclnn exec` names: PYACLNN_PYTHON (its venv, hence torch and pyaclnn) and
 * PYACLNN_LIBPYTHON (the shared libpython it was built with). Each rank is then a thread of this process with a
 * gloo process group of its own (docs/hccl.md: measured, and why not another engine). Returns 1 if started. */
static int py_embed(void)
{
    const char *exe = getenv("PYACLNN_PYTHON"), *lib = getenv("PYACLNN_LIBPYTHON");
    if (exe == NULL || exe[0] == '\0' || lib == NULL || lib[0] == '\0') {
        snprintf(py_missing, sizeof py_missing, "this process has no Python and PYACLNN_PYTHON / PYACLNN_LIBPYTHON "
                 "are not set (run the program under `python -m pyaclnn exec -- PROGRAM`, which sets them)");
        return 0;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL); /* global: torch's extension modules bind to it */
    if (h == NULL) {
        snprintf(py_missing, sizeof py_missing, "cannot load PYACLNN_LIBPYTHON: %s", dlerror());
        return 0;
    }
    void (*set_program)(const wchar_t *) = (void (*)(const wchar_t *))dlsym(h, "Py_SetProgramName");
    wchar_t *(*decode)(const char *, size_t *) = (wchar_t * (*)(const char *, size_t *)) dlsym(h, "Py_DecodeLocale");
    void (*initialize)(int) = (void (*)(int))dlsym(h, "Py_InitializeEx");
    void *(*save_thread)(void) = (void *(*)(void))dlsym(h, "PyEval_SaveThread");
    wchar_t *program = decode ? decode(exe, NULL) : NULL;
    if (!set_program || !initialize || !save_thread || program == NULL) {
        snprintf(py_missing, sizeof py_missing, "%s is not a usable libpython", lib);
        return 0;
    }
    /* only torch.distributed is needed: torch's auto-import of torch_npu would bring up a second runtime user */
    setenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "0", 0);
    set_program(program); /* the interpreter's own path: its prefix and venv (site-packages) follow from it */
    initialize(0);        /* 0: the program's signal handlers stay */
    save_thread();        /* the GIL is taken per call (PyGILState_Ensure), from whichever thread calls */
    return 1;             /* never finalized: `program` lives as long as the interpreter */
}

static void py_lookup(void)
{
    int (*running)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if ((running == NULL || !running()) && !py_embed()) return;
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
long long hccl_transport(const char *func, const char *fn, int n, long long a0, long long a1, long long a2,
                         long long a3, long long a4, long long a5)
{
    static const char *const formats[] = {"()", "(L)", "(LL)", "(LLL)", "(LLLL)", "(LLLLL)", "(LLLLLL)"};
    pthread_once(&py_once, py_lookup);
    if (!py.ok) {
        fprintf(stderr, "pyaclnn-hccl: %s: the emulated HCCL moves data through torch's gloo and needs a Python "
                        "with torch: %s\n", func, py_missing[0] ? py_missing : "no usable Python in this process");
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
typedef hccl_comm Comm;

/* The live communicators: a handle is checked against this set, never dereferenced first (a destroyed or foreign
 * pointer is HCCL_E_PARA, not a read of freed memory). */
static stub_registry comms = STUB_REGISTRY_INIT;
enum { KIND_COMM = 1 };

Comm *hccl_comm_of(HcclComm handle)
{
    return handle && stub_registry_kind(&comms, handle) == KIND_COMM ? (Comm *)handle : NULL;
}

/* A query's communicator and out-pointer: HCCL_E_PTR for NULL, HCCL_E_PARA for a handle that is not a live
 * communicator. */
static HcclResult comm_and_out(HcclComm comm, const void *out, Comm **c)
{
    if (comm == NULL || out == NULL) return HCCL_E_PTR;
    *c = hccl_comm_of(comm);
    return *c != NULL ? HCCL_SUCCESS : HCCL_E_PARA;
}

HCCL_API HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
    if (rootInfo == NULL) return HCCL_E_PTR;
    long long r = hccl_transport("HcclGetRootInfo", "get_root_info", 1, ADDR(rootInfo), 0, 0, 0, 0, 0);
    return (HcclResult)(r < 0 ? -r : r);
}

static HcclResult init_comm(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, const char *name,
                            HcclComm *comm)
{
    if (rootInfo == NULL || comm == NULL) return HCCL_E_PTR;
    if (nRanks == 0 || rank >= nRanks) return HCCL_E_PARA;
    /* the transport thread's entry points go with it: pyaclnn._hccl calls them through ctypes */
    long long id = hccl_transport("HcclCommInitRootInfo", "comm_init", 6, ADDR(rootInfo), nRanks, rank,
                                  ADDR(hccl_service_next), ADDR(hccl_service_done), ADDR(hccl_service_stop));
    if (id <= 0) return (HcclResult)(id < 0 ? -id : HCCL_E_INTERNAL);
    Comm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        (void)hccl_transport("HcclCommInitRootInfo", "comm_destroy", 1, id, 0, 0, 0, 0, 0);
        return HCCL_E_MEMORY;
    }
    c->nranks = nRanks;
    c->rank = rank;
    c->id = id;
    if (stub_registry_add(&comms, c, KIND_COMM) != 0) {
        (void)hccl_transport("HcclCommInitRootInfo", "comm_destroy", 1, id, 0, 0, 0, 0, 0);
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
                                               const HcclCommConfig *config, HcclComm *comm)
{
    if (config == NULL) return HCCL_E_PTR;
    /* the header HcclCommConfigInit writes into config->reserved: size, magic word, version, reserved */
    struct { size_t size; uint32_t magicWord, version; uint64_t reserved; } info;
    memcpy(&info, config->reserved, sizeof info);
    /* A config HcclCommConfigInit did not prepare is refused, as by CANN (magic word and size). */
    if (info.magicWord != HCCL_COMM_CONFIG_MAGIC_WORD ||
        info.size < offsetof(HcclCommConfig, hcclCommName) + COMM_NAME_MAX_LENGTH)
        return HCCL_E_PARA;
    char name[COMM_NAME_MAX_LENGTH];
    memcpy(name, config->hcclCommName, sizeof name);
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
    (void)hccl_transport("HcclCommDestroy", "comm_destroy", 1, c->id, 0, 0, 0, 0, 0);
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
    *asyncError = (HcclResult)atomic_load(&c->async_error); /* the first failure of a queued collective */
    return HCCL_SUCCESS;
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

/* ---- refused: what neither torch_npu 2.13's traced paths nor the vendor's samples reach -------------------- */

static HcclResult refused(const char *func, const char *why)
{
    fprintf(stderr, "pyaclnn-hccl: %s is not supported by the emulator (%s); HCCL_E_NOT_SUPPORT\n", func, why);
    return HCCL_E_NOT_SUPPORT;
}

HCCL_API HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm)
{
    (void)clusterInfo, (void)rank, (void)comm;
    return refused("HcclCommInitClusterInfo", "rank table files name NPU device IPs; use HcclCommInitRootInfo");
}

HCCL_API HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank, HcclCommConfig *config,
                                                  HcclComm *comm)
{
    (void)clusterInfo, (void)rank, (void)config, (void)comm;
    return refused("HcclCommInitClusterInfoConfig", "rank table files name NPU device IPs; use "
                                                    "HcclCommInitRootInfoConfig");
}

HCCL_API HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds, uint64_t subCommId,
                                            uint32_t subCommRankId, HcclCommConfig *config, HcclComm *subComm)
{
    (void)comm, (void)rankNum, (void)rankIds, (void)subCommId, (void)subCommRankId, (void)config, (void)subComm;
    return refused("HcclCreateSubCommConfig", "a sub-communicator needs its own root info here; torch_npu's "
                                              "new_group makes one");
}

HCCL_API HcclResult HcclGroupStart(void)
{
    return refused("HcclGroupStart", "grouped calls are not emulated; HcclBatchSendRecv is");
}

HCCL_API HcclResult HcclGroupEnd(void)
{
    return refused("HcclGroupEnd", "grouped calls are not emulated; HcclBatchSendRecv is");
}
