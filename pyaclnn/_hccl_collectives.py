"""The collectives of the emulated libhccl on torch's gloo: each starts gloo's operation for one request of the
transport thread (pyaclnn/_hccl.py) and returns its works and what to do once they are done. Device memory of the
emulator is host memory, so a device address becomes a CPU tensor without a copy. Importing this module does not
import torch."""
from __future__ import annotations

import ctypes
import datetime
import functools
import os
import threading

# HCCL's defaults, in seconds (the vendor's HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT).
CONNECT_TIMEOUT_DEFAULT = 120
EXEC_TIMEOUT_DEFAULT = 1836


def timeout(name: str, default: int) -> datetime.timedelta:
    value = os.environ.get(name, "")
    try:
        seconds = int(value) if value else default
    except ValueError:
        seconds = default
    # HCCL_EXEC_TIMEOUT=0 means "never" for the vendor; gloo needs a bound, so a day stands for it.
    return datetime.timedelta(seconds=seconds if seconds > 0 else 86400)


def _tensor(address: int, count: int, dtype: int):
    import torch
    torch_dtype, size = tables()[0][dtype]
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
        opts.reduceOp = tables()[1][op]
    opts.timeout = timeout("HCCL_EXEC_TIMEOUT", EXEC_TIMEOUT_DEFAULT)
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
    torch_dtype = tables()[0][dtype][0]
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
KINDS = [
    ("HcclAllReduce", _all_reduce, 5, False), ("HcclBroadcast", _broadcast, 4, False),
    ("HcclAllGather", _all_gather, 4, False), ("HcclReduceScatter", _reduce_scatter, 5, False),
    ("HcclAlltoAll", _all_to_all, 4, False), ("HcclSend", _send, 4, False), ("HcclRecv", _recv, 4, False),
    ("HcclBarrier", _barrier, 0, False), ("HcclReduce", _reduce, 6, False), ("HcclScatter", _scatter, 5, False),
    ("HcclAlltoAllV", _all_to_all_v, 3, True), ("HcclAllGatherV", _all_gather_v, 4, True),
    ("HcclReduceScatterV", _reduce_scatter_v, 5, True), ("HcclBatchSendRecv", _batch_send_recv, 0, True),
]


class Entry:
    __slots__ = ("group", "rank", "size")

    def __init__(self, group, rank, size):
        self.group, self.rank, self.size = group, rank, size


@functools.lru_cache(maxsize=1)
def tables():
    """{HCCL dtype: (torch dtype, size)}, {HCCL reduce op: torch's}: built at the first collective (importing this
    module does not import torch)."""
    import torch
    import torch.distributed as dist
    dtypes = {0: (torch.int8, 1), 2: (torch.int32, 4), 3: (torch.float16, 2),
              4: (torch.float32, 4), 5: (torch.int64, 8), 7: (torch.uint8, 1), 10: (torch.float64, 8),
              11: (torch.bfloat16, 2)}
    ops = {0: dist.ReduceOp.SUM, 1: dist.ReduceOp.PRODUCT, 2: dist.ReduceOp.MAX, 3: dist.ReduceOp.MIN}
    return dtypes, ops
