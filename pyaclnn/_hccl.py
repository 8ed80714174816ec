"""The emulated libhccl's transport: torch's gloo, reached through ``torch.distributed`` in the same process.

libhccl.so (native_stubs/src/compat/hccl.c) calls the communicator functions here with the GIL taken. Its
collectives are stream tasks (hccl_task.c): when a stream reaches one, its worker hands the request to this
module's transport thread (``_serve``) and waits for the answer; the thread starts the gloo operation, polls it
and answers. Device memory of the emulator is host memory, so a device address becomes a CPU tensor without a
copy. docs/hccl.md says why gloo (measured).

Every function returns an HcclResult code; failures print one line naming the call and the rank on stderr, so the
C side never sees a Python exception.
"""
from __future__ import annotations

import ctypes
import functools
import datetime
import json
import os
import socket
import sys
import threading
import time
import uuid

# hccl_types.h
SUCCESS, E_PARA, E_PTR, E_INTERNAL, E_NOT_SUPPORT, E_TIMEOUT = 0, 1, 2, 4, 5, 9
E_TCP_CONNECT, E_TCP_TRANSFER = 11, 13
ROOT_INFO_BYTES = 4108
_MAGIC = b"pyaclnn-hccl-root-info/1\n"

# HCCL's defaults, in seconds (the vendor's HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT).
_CONNECT_TIMEOUT_DEFAULT = 120
_EXEC_TIMEOUT_DEFAULT = 1836

_lock = threading.Lock()
_stores = {}   # root id -> the TCPStore this process serves (rank 0 keeps it alive until its comm is destroyed)
_comms = {}    # comm id -> (process group, rank, size)
_next_id = 1


def _timeout(name: str, default: int) -> datetime.timedelta:
    value = os.environ.get(name, "")
    try:
        seconds = int(value) if value else default
    except ValueError:
        seconds = default
    # HCCL_EXEC_TIMEOUT=0 means "never" for the vendor; gloo needs a bound, so a day stands for it.
    return datetime.timedelta(seconds=seconds if seconds > 0 else 86400)


def _fail(call: str, code: int, rank, err: BaseException, size=None) -> int:
    where = f"rank {rank}" if rank is not None else "root"
    # gloo names the peer by address only; in a pair the peer is known
    peer = f" (peer: rank {1 - rank})" if code == E_TCP_TRANSFER and size == 2 and rank in (0, 1) else ""
    print(f"pyaclnn-hccl: {call} failed on {where}{peer} with HCCL error {code}: {err}", file=sys.stderr, flush=True)
    return code


def _code_of(err: BaseException) -> int:
    text = str(err).lower()
    if "timeout" in text or "timed out" in text:
        return E_TIMEOUT
    if "connect" in text or "closed" in text or "reset" in text or "broken pipe" in text or "peer" in text:
        return E_TCP_TRANSFER
    return E_INTERNAL


def _host() -> str:
    """The address the other ranks reach this one at: HCCL's own variable, else this host's address on the route to
    torchrun's MASTER_ADDR (a sub-group's rank 0 may be on another host than the master), else loopback."""
    if os.environ.get("HCCL_IF_IP"):
        return os.environ["HCCL_IF_IP"]
    master = os.environ.get("MASTER_ADDR")
    if not master:
        return "127.0.0.1"
    try:
        family = socket.AF_INET6 if ":" in master else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((master, 9))  # a UDP connect only picks the route; nothing is sent
            return probe.getsockname()[0]
    except OSError:
        return master


def get_root_info(address: int) -> int:
    """HcclGetRootInfo: start a store for one communicator and write where it is into the 4108 bytes."""
    try:
        import torch.distributed as dist
        host = _host()
        store = dist.TCPStore(host, 0, is_master=True, wait_for_workers=False,
                              timeout=_timeout("HCCL_CONNECT_TIMEOUT", _CONNECT_TIMEOUT_DEFAULT))
        root = uuid.uuid4().hex
        with _lock:
            _stores[root] = store
        blob = _MAGIC + json.dumps({"host": host, "port": store.port, "id": root}).encode()
        ctypes.memset(address, 0, ROOT_INFO_BYTES)
        ctypes.memmove(address, blob, len(blob))
        return SUCCESS
    except Exception as err:  # noqa: BLE001 - every failure becomes an HCCL code
        return _fail("HcclGetRootInfo", E_TCP_CONNECT, None, err)


def comm_init(address: int, nranks: int, rank: int, next_fn: int = 0, done_fn: int = 0, stop_fn: int = 0) -> int:
    """HcclCommInitRootInfo: join the communicator; returns its id (> 0) or minus an HCCL code. The last three are
    libhccl's transport entry points (hccl_task.c): the transport thread is started with them."""
    global _next_id
    try:
        if next_fn:
            _start_service(next_fn, done_fn, stop_fn)
        raw = ctypes.string_at(address, ROOT_INFO_BYTES).rstrip(b"\0")
        if not raw.startswith(_MAGIC):
            print(f"pyaclnn-hccl: HcclCommInitRootInfo on rank {rank}: the root info was not made by "
                  "this emulator's HcclGetRootInfo", file=sys.stderr, flush=True)
            return -E_PARA
        info = json.loads(raw[len(_MAGIC):])
        import torch.distributed as dist
        connect = _timeout("HCCL_CONNECT_TIMEOUT", _CONNECT_TIMEOUT_DEFAULT)
        with _lock:
            store = _stores.get(info["id"])
        if store is None:
            store = dist.TCPStore(info["host"], int(info["port"]), is_master=False, timeout=connect)
        prefixed = dist.PrefixStore(info["id"], store)
        # the group's own timeout bounds the wait for the other ranks; each collective passes the exec timeout
        group = dist.ProcessGroupGloo(prefixed, rank, nranks, connect)
        with _lock:
            comm = _next_id
            _next_id += 1
            _comms[comm] = (group, rank, nranks, info["id"])
        return comm
    except Exception as err:  # noqa: BLE001
        return -_fail("HcclCommInitRootInfo", _code_of(err) if _code_of(err) != E_INTERNAL else E_TCP_CONNECT,
                      rank, err)


def comm_destroy(comm: int) -> int:
    with _lock:
        entry = _comms.pop(comm, None)
        if entry is not None and not any(c[3] == entry[3] for c in _comms.values()):
            _stores.pop(entry[3], None)
    return SUCCESS if entry is not None else E_PARA


# ---- the collectives: each starts gloo's operation and returns its works and what to do once they are done ----

def _tensor(address: int, count: int, dtype: int):
    import torch
    torch_dtype, size = _tables()[0][dtype]
    if count == 0:
        return torch.empty(0, dtype=torch_dtype)
    buffer = (ctypes.c_char * (count * size)).from_address(address)
    return torch.frombuffer(buffer, dtype=torch_dtype, count=count)


def _opts(name: str, op=None):
    import torch.distributed as dist
    from torch._C import _distributed_c10d as c10d  # AllgatherOptions is not re-exported
    opts = getattr(dist, name, None) or getattr(c10d, name)
    opts = opts()
    if op is not None:
        opts.reduceOp = _tables()[1][op]
    opts.timeout = _timeout("HCCL_EXEC_TIMEOUT", _EXEC_TIMEOUT_DEFAULT)
    return opts


def _blocks(buf, counts, displs):
    """The views of buf at each (displacement, count) pair."""
    return [buf[d:d + c] for c, d in zip(counts, displs)]


def _all_reduce(e, send, recv, count, dtype, op):
    out = _tensor(recv, count, dtype)
    if send != recv and count:
        out.copy_(_tensor(send, count, dtype))
    return [e.group.allreduce([out], _opts("AllreduceOptions", op))], None


def _reduce(e, send, recv, count, dtype, op, root):
    work = _tensor(send, count, dtype).clone()  # gloo leaves partial results in the non-roots' buffers
    opts = _opts("ReduceOptions", op)
    opts.rootRank, opts.rootTensor = root, 0
    after = (lambda: _tensor(recv, count, dtype).copy_(work)) if e.rank == root and count else None
    return [e.group.reduce([work], opts)], after


def _broadcast(e, buf, count, dtype, root):
    opts = _opts("BroadcastOptions")
    opts.rootRank, opts.rootTensor = root, 0
    return [e.group.broadcast([_tensor(buf, count, dtype)], opts)], None


def _scatter(e, send, recv, count, dtype, root):
    opts = _opts("ScatterOptions")
    opts.rootRank = root
    inputs = [list(_tensor(send, count * e.size, dtype).clone().split(count))] if e.rank == root and count else []
    if not count:
        return [], None
    return [e.group.scatter([_tensor(recv, count, dtype)], inputs, opts)], None


def _all_gather(e, send, recv, count, dtype):
    out = _tensor(recv, count * e.size, dtype)
    inp = _tensor(send, count, dtype).clone()  # in place: the rank's own block of out
    if not count:
        return [], None
    # gloo writes each rank's block into the views of the receive buffer
    return [e.group.allgather([list(out.split(count))], [inp], _opts("AllgatherOptions"))], None


def _block_reduces(e, blocks, op, recv, count, dtype):
    """A reduce-scatter as one all-reduce per block (on copies), of which this rank keeps its own: gloo's own
    reduce-scatter cannot be polled (its work reports completion only through wait()), and this gives its results
    bit for bit (measured with 4 ranks, fp16 sums; an all-reduce of the whole buffer sums in another order)."""
    copies = [b.clone() for b in blocks]
    works = [e.group.allreduce([c], _opts("AllreduceOptions", op)) for c in copies]
    return works, lambda: _tensor(recv, count, dtype).copy_(copies[e.rank])


def _reduce_scatter(e, send, recv, count, dtype, op):
    if not count:
        return [], None
    return _block_reduces(e, list(_tensor(send, count * e.size, dtype).split(count)), op, recv, count, dtype)


def _all_to_all(e, send, recv, count, dtype):
    inp = _tensor(send, count * e.size, dtype).clone()
    out = _tensor(recv, count * e.size, dtype)
    return [e.group.alltoall_base(out, inp, [], [], _opts("AllToAllOptions"))], None


def _alltoall_blocks(e, send_blocks, recv_counts, dtype):
    """gloo's all-to-all with splits: the blocks to send (one per rank), the counts to receive; returns the works
    and the packed receive tensor."""
    import torch
    torch_dtype = _tables()[0][dtype][0]
    inp = torch.cat([b.reshape(-1) for b in send_blocks]) if send_blocks else torch.empty(0, dtype=torch_dtype)
    out = torch.empty(sum(recv_counts), dtype=torch_dtype)
    in_splits = [b.numel() for b in send_blocks]
    return [e.group.alltoall_base(out, inp, list(recv_counts), in_splits, _opts("AllToAllOptions"))], out


def _unpack(out, counts, displs, recv, dtype):
    """Copies the packed blocks of out to their displacements in the receive buffer."""
    end = max((d + c for c, d in zip(counts, displs) if c), default=0)
    dst = _tensor(recv, end, dtype)
    for block, piece in zip(_blocks(dst, counts, displs), out.split(list(counts))):
        block.copy_(piece)


def _all_to_all_v(e, send, recv, dtype, extra):
    n = e.size
    scounts, sdispls, rcounts, rdispls = extra[:n], extra[n:2 * n], extra[2 * n:3 * n], extra[3 * n:]
    send_end = max((d + c for c, d in zip(scounts, sdispls) if c), default=0)
    works, out = _alltoall_blocks(e, _blocks(_tensor(send, send_end, dtype), scounts, sdispls), rcounts, dtype)
    return works, lambda: _unpack(out, rcounts, rdispls, recv, dtype)


def _all_gather_v(e, send, recv, count, dtype, extra):
    # every rank sends its block to every rank: an all-to-all with splits gives uneven blocks exactly
    n = e.size
    counts, displs = extra[:n], extra[n:]
    block = _tensor(send, count, dtype)
    works, out = _alltoall_blocks(e, [block] * n, counts, dtype)
    return works, lambda: _unpack(out, counts, displs, recv, dtype)


def _reduce_scatter_v(e, send, recv, count, dtype, op, extra):
    n = e.size
    counts, displs = extra[:n], extra[n:]
    end = max((d + c for c, d in zip(counts, displs) if c), default=0)
    return _block_reduces(e, _blocks(_tensor(send, end, dtype), counts, displs), op, recv, count, dtype)


class _Waiting:
    """gloo's send and recv works report completion only through wait(): a daemon thread waits (the GIL released
    inside) and the transport polls the thread."""

    def __init__(self, work):
        self.work, self.error = work, None
        self.thread = threading.Thread(target=self._wait, name="pyaclnn-hccl-p2p", daemon=True)
        self.thread.start()

    def _wait(self):
        try:
            self.work.wait()
        except Exception as err:  # noqa: BLE001 - handed to the transport thread
            self.error = err

    def is_completed(self):
        return not self.thread.is_alive()

    def wait(self):
        if self.error is not None:
            raise self.error


def _send(e, buf, count, dtype, peer):
    return [_Waiting(e.group.send([_tensor(buf, count, dtype)], peer, 0))], None


def _recv(e, buf, count, dtype, peer):
    return [_Waiting(e.group.recv([_tensor(buf, count, dtype)], peer, 0))], None


def _batch_send_recv(e, extra):
    works = []
    for i in range(0, len(extra), 5):  # {type, buf, count, dtype, peer}: HCCL_SEND 0, HCCL_RECV 1
        kind, buf, count, dtype, peer = extra[i:i + 5]
        tensor = _tensor(buf, count, dtype)
        works.append(_Waiting(e.group.send([tensor], peer, 0) if kind == 0 else e.group.recv([tensor], peer, 0)))
    return works, None


def _barrier(e):
    return [e.group.barrier(_opts("BarrierOptions"))], None


# hccl_internal.h's HCCL_KIND_* order: (name for messages, function, number of arguments, takes the extra array)
_KINDS = [
    ("HcclAllReduce", _all_reduce, 5, False), ("HcclBroadcast", _broadcast, 4, False),
    ("HcclAllGather", _all_gather, 4, False), ("HcclReduceScatter", _reduce_scatter, 5, False),
    ("HcclAlltoAll", _all_to_all, 4, False), ("HcclSend", _send, 4, False), ("HcclRecv", _recv, 4, False),
    ("HcclBarrier", _barrier, 0, False), ("HcclReduce", _reduce, 6, False), ("HcclScatter", _scatter, 5, False),
    ("HcclAlltoAllV", _all_to_all_v, 3, True), ("HcclAllGatherV", _all_gather_v, 4, True),
    ("HcclReduceScatterV", _reduce_scatter_v, 5, True), ("HcclBatchSendRecv", _batch_send_recv, 0, True),
]


class _Entry:
    __slots__ = ("group", "rank", "size")

    def __init__(self, group, rank, size):
        self.group, self.rank, self.size = group, rank, size


def _start(request):
    """Starts one request {request, kind, args..., extra address, extra length}: (works, after) or raises; the
    communicator id is the argument after the kind's own ones."""
    name, fn, nargs, takes_extra = _KINDS[request[1]]
    args = list(request[2:2 + nargs])
    comm = request[2 + nargs]
    entry = _comms.get(comm)
    if entry is None:
        raise LookupError(f"communicator {comm} was destroyed")
    e = _Entry(entry[0], entry[1], entry[2])
    if takes_extra:
        n = request[3 + 7]
        extra = list((ctypes.c_uint64 * n).from_address(request[2 + 7])) if n else []
        return fn(e, *args, extra)
    return fn(e, *args)


# ---- the transport thread --------------------------------------------------------------------------------------

_service = None  # (thread, pid, done function, stop function)
# in flight: [request, name, rank, size, works, after, process group (kept alive until the works are done)]
_pending = []


def _start_service(next_addr: int, done_addr: int, stop_addr: int) -> None:
    global _service
    with _lock:
        if _service is not None and _service[1] == os.getpid() and _service[0].is_alive():
            return
        next_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_longlong), ctypes.c_longlong)(next_addr)
        done_fn = ctypes.CFUNCTYPE(None, ctypes.c_longlong, ctypes.c_int, ctypes.c_char_p)(done_addr)
        stop_fn = ctypes.CFUNCTYPE(None)(stop_addr)
        thread = threading.Thread(target=_serve, args=(next_fn, done_fn), name="pyaclnn-hccl", daemon=True)
        _service = (thread, os.getpid(), done_fn, stop_fn)
        thread.start()
    import atexit
    atexit.register(_at_exit)


def _at_exit() -> None:
    """Before the interpreter goes: no more requests, the stream workers waiting on one give up, and the process
    groups are never destroyed (the destructor joins gloo's thread, which may be inside a collective whose peer
    never comes: the exit would wait for the exec timeout)."""
    if _service is None or _service[1] != os.getpid():
        return
    _service[3]()
    with _lock:
        groups = [entry[0] for entry in _comms.values()] + [item[6] for item in _pending]
    for group in groups:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(group))


def _serve(next_fn, done_fn) -> None:
    """Takes requests, starts them (several may be in flight: collectives of different communicators, or of one
    on several streams, complete in any order) and answers each when its works are done. Waits for a request
    with the GIL released (ctypes); while works are in flight it polls them, a longer wait each time up to 1 ms
    (a 64 MiB all-reduce takes ~70 ms here; a small one ~0.1 ms)."""
    out = (ctypes.c_longlong * 12)()
    pending = _pending
    pause = 20
    while True:
        got = next_fn(out, pause if pending else 200000)
        if got < 0:
            return
        if got:
            request = list(out)
            name = _KINDS[request[1]][0]
            entry = _comms.get(request[2 + _KINDS[request[1]][2]])
            rank, size = (entry[1], entry[2]) if entry else (None, None)
            try:
                works, after = _start(request)
                with _lock:
                    pending.append([request[0], name, rank, size, works, after, entry[0]])
            except Exception as err:  # noqa: BLE001 - every failure becomes an HCCL code
                code = E_PARA if isinstance(err, LookupError) else _code_of(err)
                done_fn(request[0], _fail(name, code, rank, err, size), str(err).encode(errors="replace")[:500])
            pause = 20
            continue
        for item in list(pending):
            if not all(w.is_completed() for w in item[4]):
                continue
            with _lock:
                pending.remove(item)
            code, message = SUCCESS, b""
            try:
                for w in item[4]:
                    w.wait()  # completed: returns at once, or raises the failure
                if item[5] is not None:
                    item[5]()
            except Exception as err:  # noqa: BLE001
                code = _fail(item[1], _code_of(err), item[2], err, size=item[3])
                message = str(err).encode(errors="replace")[:500]
            done_fn(item[0], code, message)
        pause = min(pause * 2, 1000)


@functools.lru_cache(maxsize=1)
def _tables():
    """{HCCL dtype: (torch dtype, size)}, {HCCL reduce op: torch's}: built at the first collective (importing this
    module does not import torch)."""
    import torch
    import torch.distributed as dist
    dtypes = {0: (torch.int8, 1), 2: (torch.int32, 4), 3: (torch.float16, 2),
              4: (torch.float32, 4), 5: (torch.int64, 8), 7: (torch.uint8, 1), 10: (torch.float64, 8),
              11: (torch.bfloat16, 2)}
    ops = {0: dist.ReduceOp.SUM, 1: dist.ReduceOp.PRODUCT, 2: dist.ReduceOp.MAX, 3: dist.ReduceOp.MIN}
    return dtypes, ops
