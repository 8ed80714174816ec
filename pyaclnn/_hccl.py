"""The emulated libhccl's transport: torch's gloo, reached through ``torch.distributed`` in the same process.

libhccl.so (native_stubs/src/compat/hccl.c) calls these functions with the GIL taken, in the thread that called
the Hccl* entry point, after the caller's stream has run its earlier work. Device memory of the emulator is host
memory, so a device address becomes a CPU tensor without a copy. docs/hccl.md says why gloo (measured).

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


def comm_init(address: int, nranks: int, rank: int) -> int:
    """HcclCommInitRootInfo: join the communicator; returns its id (> 0) or minus an HCCL code."""
    global _next_id
    try:
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


def _tensor(address: int, count: int, dtype: int):
    import torch
    torch_dtype, size = _tables()[0][dtype]
    if count == 0:
        return torch.empty(0, dtype=torch_dtype)
    buffer = (ctypes.c_char * (count * size)).from_address(address)
    return torch.frombuffer(buffer, dtype=torch_dtype, count=count)


def _run(call: str, comm: int, work) -> int:
    entry = _comms.get(comm)
    if entry is None:
        return E_PARA
    group, rank = entry[0], entry[1]
    try:
        work(group).wait()
        return SUCCESS
    except Exception as err:  # noqa: BLE001
        return _fail(call, _code_of(err), rank, err, size=entry[2])


def all_reduce(send: int, recv: int, count: int, dtype: int, op: int, comm: int) -> int:
    import torch.distributed as dist
    out = _tensor(recv, count, dtype)
    if send != recv and count:
        out.copy_(_tensor(send, count, dtype))
    opts = dist.AllreduceOptions()
    opts.reduceOp = _tables()[1][op]
    opts.timeout = _exec_timeout()
    return _run("HcclAllReduce", comm, lambda g: g.allreduce([out], opts))


def broadcast(buf: int, count: int, dtype: int, root: int, comm: int) -> int:
    import torch.distributed as dist
    opts = dist.BroadcastOptions()
    opts.rootRank = root
    opts.rootTensor = 0
    opts.timeout = _exec_timeout()
    return _run("HcclBroadcast", comm, lambda g: g.broadcast([_tensor(buf, count, dtype)], opts))


def all_gather(send: int, recv: int, count: int, dtype: int, comm: int) -> int:
    entry = _comms.get(comm)
    if entry is None:
        return E_PARA
    out = _tensor(recv, count * entry[2], dtype)
    inp = _tensor(send, count, dtype).clone() if send != recv else None  # in place: the rank's own block
    if inp is None:
        inp = out[entry[1] * count:(entry[1] + 1) * count].clone()
    from torch._C._distributed_c10d import AllgatherOptions  # not re-exported by torch.distributed
    opts = AllgatherOptions()
    opts.timeout = _exec_timeout()
    # gloo writes each rank's block into the views of the receive buffer
    return _run("HcclAllGather", comm,
                lambda g: g.allgather([list(out.split(count))] if count else [[]], [inp], opts))


def reduce_scatter(send: int, recv: int, count: int, dtype: int, op: int, comm: int) -> int:
    entry = _comms.get(comm)
    if entry is None:
        return E_PARA
    inp = _tensor(send, count * entry[2], dtype).clone()  # recv may lie inside send
    out = _tensor(recv, count, dtype)
    opts = dist_module().ReduceScatterOptions()
    opts.reduceOp = _tables()[1][op]
    opts.timeout = _exec_timeout()
    return _run("HcclReduceScatter", comm, lambda g: g.reduce_scatter([out], [list(inp.split(count))], opts))


def all_to_all(send: int, recv: int, count: int, dtype: int, comm: int) -> int:
    entry = _comms.get(comm)
    if entry is None:
        return E_PARA
    inp = _tensor(send, count * entry[2], dtype).clone()
    out = _tensor(recv, count * entry[2], dtype)
    opts = dist_module().AllToAllOptions()
    opts.timeout = _exec_timeout()
    return _run("HcclAlltoAll", comm, lambda g: g.alltoall_base(out, inp, [], [], opts))


def send(buf: int, count: int, dtype: int, peer: int, comm: int) -> int:
    return _run("HcclSend", comm, lambda g: g.send([_tensor(buf, count, dtype)], peer, 0))


def recv(buf: int, count: int, dtype: int, peer: int, comm: int) -> int:
    return _run("HcclRecv", comm, lambda g: g.recv([_tensor(buf, count, dtype)], peer, 0))


def dist_module():
    import torch.distributed as dist
    return dist


def barrier(comm: int) -> int:
    opts = dist_module().BarrierOptions()
    opts.timeout = _exec_timeout()
    return _run("HcclBarrier", comm, lambda g: g.barrier(opts))


def _exec_timeout():
    return _timeout("HCCL_EXEC_TIMEOUT", _EXEC_TIMEOUT_DEFAULT)


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

