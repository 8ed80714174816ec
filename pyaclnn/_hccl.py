"""The emulated libhccl's transport: torch's gloo, reached through ``torch.distributed`` in the same process.

libhccl.so (native_stubs/src/compat/hccl.c) calls the communicator functions here with the GIL taken. Its
collectives are stream tasks (hccl_task.c): when a stream reaches one, its worker hands the request to this
module's transport thread (``_serve``) and waits for the answer; the thread starts the gloo operation
(pyaclnn/_hccl_collectives.py), polls it and answers. docs/hccl.md says why gloo (measured).

Every function returns an HcclResult code; failures print one line naming the call and the rank on stderr, so the
C side never sees a Python exception.
"""
from __future__ import annotations

import ctypes
import json
import os
import socket
import sys
import threading
import uuid

from ._exceptions import ClosedError
from ._hccl_collectives import CONNECT_TIMEOUT_DEFAULT, KINDS, Entry, timeout
from ._hccl_peers import learn, peer_of

# hccl_types.h
SUCCESS, E_PARA, E_PTR, E_INTERNAL, E_NOT_SUPPORT, E_TIMEOUT = 0, 1, 2, 4, 5, 9
E_TCP_CONNECT, E_TCP_TRANSFER = 11, 13
ROOT_INFO_BYTES = 4108
_MAGIC = b"pyaclnn-hccl-root-info/1\n"


_lock = threading.Lock()
_stores = {}   # root id -> the TCPStore this process serves (rank 0 keeps it alive until its comm is destroyed)
_comms = {}    # comm id -> (process group, rank, size, root id, {peer address: rank})
_next_id = 1


def _peer(code: int, rank, err: BaseException, size, peers):
    """The rank a transfer failure is about: gloo names it by address only, mapped by _hccl_peers; in a pair it is
    the other one anyway."""
    if code != E_TCP_TRANSFER:
        return None
    other = peer_of(str(err), peers or {})
    if other is None and size == 2 and rank in (0, 1):
        other = 1 - rank
    return other


def _fail(call: str, code: int, rank, err: BaseException, size=None, peers=None) -> int:
    where = f"rank {rank}" if rank is not None else "root"
    other = _peer(code, rank, err, size, peers)
    peer = f" (peer: rank {other})" if other is not None else ""
    print(f"pyaclnn-hccl: {call} failed on {where}{peer} with HCCL error {code}: {err}", file=sys.stderr, flush=True)
    return code


def _message(code: int, rank, err: BaseException, size, peers) -> bytes:
    """The failed task's message (what the next synchronisation raises): the peer's rank first, then gloo's."""
    other = _peer(code, rank, err, size, peers)
    text = (f"the peer is rank {other}: " if other is not None else "") + str(err)
    return text.encode(errors="replace")[:500]


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
                              timeout=timeout("HCCL_CONNECT_TIMEOUT", CONNECT_TIMEOUT_DEFAULT))
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
        connect = timeout("HCCL_CONNECT_TIMEOUT", CONNECT_TIMEOUT_DEFAULT)
        # a client of its own even beside the master store: ranks may be threads of one process (a C program's
        # one thread per device), and a store client is not to be shared by concurrent waits (measured: they hang)
        store = dist.TCPStore(info["host"], int(info["port"]), is_master=False, timeout=connect)
        prefixed = dist.PrefixStore(info["id"], store)
        # the group's own timeout bounds the wait for the other ranks; each collective passes the exec timeout
        group = dist.ProcessGroupGloo(prefixed, rank, nranks, connect)
        peers = learn(prefixed, rank, nranks)
        with _lock:
            comm = _next_id
            _next_id += 1
            _comms[comm] = (group, rank, nranks, info["id"], peers)
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


def _start(request):
    """Starts one request {request, kind, args..., extra address, extra length}: (works, after) or raises; the
    communicator id is the argument after the kind's own ones."""
    name, fn, nargs, takes_extra = KINDS[request[1]]
    args = list(request[2:2 + nargs])
    comm = request[2 + nargs]
    entry = _comms.get(comm)
    if entry is None:
        raise ClosedError(f"communicator {comm} was destroyed")
    e = Entry(entry[0], entry[1], entry[2])
    if takes_extra:
        n = request[3 + 7]
        extra = list((ctypes.c_uint64 * n).from_address(request[2 + 7])) if n else []
        return fn(e, *args, extra)
    return fn(e, *args)


# ---- the transport thread --------------------------------------------------------------------------------------

_service = None  # (thread, pid, done function, stop function)
# in flight: [request, name, rank, size, works, after, process group (kept alive until the works are done), peers]
_pending = []


def _start_service(next_addr: int, done_addr: int, stop_addr: int) -> None:
    global _service
    with _lock:
        if _service is not None and _service[1] == os.getpid() and _service[0].is_alive():
            return
        next_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_longlong), ctypes.c_longlong)(next_addr)
        done_fn = ctypes.CFUNCTYPE(None, ctypes.c_longlong, ctypes.c_int, ctypes.c_char_p)(done_addr)
        stop_fn = ctypes.CFUNCTYPE(None)(stop_addr)
        thread = threading.Thread(target=_serve_then_stop, args=(next_fn, done_fn, stop_fn), name="pyaclnn-hccl",
                                  daemon=True)
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


def _serve_then_stop(next_fn, done_fn, stop_fn) -> None:
    """The transport thread: should it ever end other than by stop (a bug), the stream workers waiting for an
    answer give up instead of waiting forever."""
    try:
        _serve(next_fn, done_fn)
    except BaseException as err:  # noqa: BLE001 - reported, then every waiting collective fails
        print(f"pyaclnn-hccl: the transport thread failed: {err!r}", file=sys.stderr, flush=True)
    finally:
        stop_fn()


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
            name = KINDS[request[1]][0]
            entry = _comms.get(request[2 + KINDS[request[1]][2]])
            rank, size, peers = (entry[1], entry[2], entry[4]) if entry else (None, None, None)
            try:
                works, after = _start(request)
                with _lock:
                    pending.append([request[0], name, rank, size, works, after, entry[0], peers])
            except Exception as err:  # noqa: BLE001 - every failure becomes an HCCL code
                code = _fail(name, E_PARA if isinstance(err, ClosedError) else _code_of(err), rank, err, size, peers)
                done_fn(request[0], code, _message(code, rank, err, size, peers))
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
                code = _fail(item[1], _code_of(err), item[2], err, size=item[3], peers=item[7])
                message = _message(code, item[2], err, item[3], item[7])
            done_fn(item[0], code, message)
        pause = min(pause * 2, 1000)
