/*
 * Shared by the files of the emulated libhccl (hccl.c: the API and communicators; hccl_task.c: collectives as
 * stream tasks handed to the Python transport thread). Not exported.
 */
#ifndef PYACLNN_HCCL_INTERNAL_H
#define PYACLNN_HCCL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "compat.h"

#include "hccl/hccl.h"   /* the vendor's prototypes and types, as shipped: the definitions below are checked against them */

#ifndef COMM_NAME_MAX_LENGTH
#define COMM_NAME_MAX_LENGTH 128
#endif

/* A communicator; its handle is checked against the live set (hccl_comm_of) before it is read. */
typedef struct {
    uint32_t nranks, rank;
    long long id;                  /* pyaclnn._hccl's */
    _Atomic int async_error;       /* the first failure of a queued collective (HcclGetCommAsyncError) */
    char name[COMM_NAME_MAX_LENGTH];
} hccl_comm;

/* The live communicator behind a handle, or NULL (NULL, destroyed or foreign). */
hccl_comm *hccl_comm_of(HcclComm handle);

/* Calls pyaclnn._hccl.<fn>(a0 .. a[n-1]) with the GIL; its int result, or -HCCL_E_NOT_SUPPORT without Python,
 * -HCCL_E_INTERNAL if Python raised. */
long long hccl_transport(const char *func, const char *fn, int n, long long a0, long long a1, long long a2,
                         long long a3, long long a4, long long a5);

/* What pyaclnn._hccl runs for a queued collective (its _KINDS table has the same order). */
enum {
    HCCL_KIND_ALL_REDUCE, HCCL_KIND_BROADCAST, HCCL_KIND_ALL_GATHER, HCCL_KIND_REDUCE_SCATTER, HCCL_KIND_ALL_TO_ALL,
    HCCL_KIND_SEND, HCCL_KIND_RECV, HCCL_KIND_BARRIER, HCCL_KIND_REDUCE, HCCL_KIND_SCATTER, HCCL_KIND_ALL_TO_ALL_V,
    HCCL_KIND_ALL_GATHER_V, HCCL_KIND_REDUCE_SCATTER_V, HCCL_KIND_BATCH_SEND_RECV,
};
#define HCCL_TASK_ARGS 7

/* Queues a collective on the caller's stream: the stream's worker hands it to the transport thread and waits
 * for it, so stream order, events, the hazard checker (acc: the bytes it reads and writes) and graph capture
 * see it like any task. extra (n_extra values: counts, displacements, send/recv items) is copied. Returns
 * HCCL_SUCCESS, or the code for a stream that cannot take the task (reported by the runtime). */
HcclResult hccl_submit(const char *func, HcclComm handle, int kind, const long long args[HCCL_TASK_ARGS],
                       const uint64_t *extra, size_t n_extra, const pyaclnn_stub_access *acc, size_t n_acc,
                       aclrtStream stream);

/* The transport thread's side (addresses handed to pyaclnn._hccl at communicator creation). */
int hccl_service_next(long long *out, long long timeout_us);
void hccl_service_done(long long request, int code, const char *msg);
void hccl_service_stop(void);

#endif
