/*
 * fork() after the runtime has started: the child inherits the parent's streams, contexts and
 * memory table but none of its threads, so no stream worker would ever run its work (its first
 * synchronisation would block forever), and any lock another thread held at fork() stays locked.
 * As CUDA does ("cannot re-initialize CUDA in forked subprocess"), the child gets a clear error at
 * once instead: once the parent has started a stream worker, every device, stream, event and
 * memory call in a forked child returns ACL_ERROR_RT_DRV_INTERNAL_ERROR (507899, what the real
 * driver gives for a device handle inherited across fork) with a message saying why. That includes
 * the context calls (aclrtCreateContext, aclrtSetCurrentContext, aclrtDestroyContext) and the device
 * resets (aclrtResetDevice, aclrtResetDeviceForce): a reset or a context destruction would wait for
 * the work of streams whose workers do not exist here, and a child that leaves normally (atexit
 * handlers, Python's Device release) calls them on its way out. aclFinalize stays usable (it joins
 * no worker in a child; init.c holds its lock across fork()).
 *
 * What a child may still do: read aclGetRecentErrMsg/aclrtGetLastError, query versions and SoC,
 * build host-side aclnn objects (tensors, arrays) and exit or exec. It must not touch the parent's
 * device memory, streams or events (nor release them: the parent still owns them). The parent is
 * unaffected and keeps working. A child that needs the device must be started fresh (exec, or
 * multiprocessing's "spawn"/"forkserver" start methods).
 *
 * The check reads one flag before any lock is taken, so a refused call cannot deadlock on a lock
 * that a thread of the parent held when fork() was called.
 */
#include <pthread.h>
#include <unistd.h>

#include "rt_internal.h"

static _Atomic int runtime_started;   /* a stream worker (hence a thread of ours) exists        */
static _Atomic int forked_child;      /* this process is a child forked after that              */
static _Atomic pid_t parent_pid;

static void in_child(void) {
    if (atomic_load(&runtime_started)) atomic_store(&forked_child, 1);
}

static void before_fork(void) { atomic_store(&parent_pid, getpid()); }

static void register_handlers(void) { pthread_atfork(before_fork, NULL, in_child); }

void rt_fork_note_start(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_handlers);
    atomic_store(&runtime_started, 1);
}

aclError rt_fork_check(const char *func) {
    if (!atomic_load(&forked_child)) return ACL_SUCCESS;
    return RT_REPORT(ACL_ERROR_RT_DRV_INTERNAL_ERROR, func,
                     "cannot use the device in a forked child process: the runtime was started in the "
                     "parent (pid %d) before fork(), and a child inherits none of its stream threads. "
                     "Start the child with exec, or multiprocessing's 'spawn' or 'forkserver' method",
                     (int)atomic_load(&parent_pid));
}

int rt_forked_child(void) { return atomic_load(&forked_child); }

PYACLNN_STUB_API int pyaclnn_stub_forked_child(void) { return atomic_load(&forked_child); }
