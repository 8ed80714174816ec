"""The ranks of tests/test_hccl.py: backend "hccl" on npu (the emulated libhccl) against backend "gloo" on cpu, in
the same process. argv: world port [peer-check port]. Imports torch and torch_npu once (most of the run's time), then
forks the ranks before any device is used; prints one JSON line per rank: {"rank": r, "mismatch": [...], "checked": n,
"dead": ...}. With a peer-check port, then 3 plain gloo ranks (peer_check) print {"peer_check": r, ...}.
With HCCL_TEST_KILL=1 the last rank dies after the checks and the others try one more all-reduce ("dead" is what
they got). A rank still running after HCCL_TEST_RANK_TIMEOUT seconds is killed and reported as hung."""
import ctypes
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch_npu
import torch_npu.distributed  # noqa: F401 - the uneven all-gather / reduce-scatter
import torch.distributed as dist

WORLD, PORT = (int(a) for a in sys.argv[1:3])
PEER_PORT = int(sys.argv[3]) if len(sys.argv) > 3 else 0
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8]


def data(dtype, seed, rank):
    # small integers: the product of the ranks' int8 values stays in range; fractions exercise fp rounding
    g = torch.Generator().manual_seed(seed * 100 + rank)
    x = torch.randint(-3, 4, (257,), generator=g)
    return x.to(dtype) if not dtype.is_floating_point else (x + torch.rand(257, generator=g) / 3).to(dtype)


def ddp_against_single_process(rank):
    """3 SGD steps of DistributedDataParallel (each rank half of the batch) against one process on the whole batch
    on cpu: the largest parameter difference (the two sum the gradients in different orders)."""
    from torch.nn.parallel import DistributedDataParallel

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(3, 4 * WORLD, 8, generator=g), torch.randn(3, 4 * WORLD, 1, generator=g)
    ddp, single = DistributedDataParallel(model().npu()), model()
    for net, batch in ((ddp, slice(rank * 4, rank * 4 + 4)), (single, slice(None))):
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            x, y = xs[step][batch], ys[step][batch]
            if net is ddp:
                x, y = x.npu(), y.npu()
            torch.nn.functional.mse_loss(net(x), y).backward()
            opt.step()
    return max(float((a.detach().cpu() - b.detach()).abs().max())
               for a, b in zip(ddp.module.parameters(), single.parameters()))


class Hazard(ctypes.Structure):  # pyaclnn_stub_hazard (pyaclnn_stub.h)
    _fields_ = [("kind", ctypes.c_int), ("api", ctypes.c_char * 48), ("op", ctypes.c_char * 48),
                ("stream", ctypes.c_void_p), ("other_stream", ctypes.c_void_p), ("other_op", ctypes.c_char * 48),
                ("other_api", ctypes.c_char * 48), ("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64),
                ("alloc", ctypes.c_uint64), ("line", ctypes.c_char * 704)]


def stream_task(rank, cpu):
    """An HcclAllReduce on a stream of our own (the C API, a communicator made here): the call returns before the
    peer has arrived, an event recorded after it is complete only once the sum is there, another stream that
    reads the receive buffer without waiting is a hazard, and a captured one runs at each replay of the model.
    Rank 1 joins only after rank 0 has looked (a barrier on the cpu group), so the order does not depend on
    timing."""
    from pyaclnn._stubpaths import stub_library_dir
    libs = Path(stub_library_dir())
    acl, hccl = ctypes.CDLL(str(libs / "libascendcl.so")), ctypes.CDLL(str(libs / "libhccl.so"))
    vp, out = ctypes.c_void_p, {}
    root = ctypes.create_string_buffer(4108)
    if rank == 0:
        assert hccl.HcclGetRootInfo(root) == 0
    shared = torch.frombuffer(bytearray(root.raw), dtype=torch.uint8)
    dist.broadcast(shared, 0, group=cpu)
    ctypes.memmove(root, bytes(shared.numpy()), 4108)
    comm, s1, s2, ev, buf, copy = vp(), vp(), vp(), vp(), vp(), vp()
    assert hccl.HcclCommInitRootInfo(ctypes.c_uint32(WORLD), root, ctypes.c_uint32(rank), ctypes.byref(comm)) == 0
    for handle in (s1, s2):
        assert acl.aclrtCreateStream(ctypes.byref(handle)) == 0
    assert acl.aclrtCreateEvent(ctypes.byref(ev)) == 0
    n = 1024
    for handle in (buf, copy):
        assert acl.aclrtMalloc(ctypes.byref(handle), ctypes.c_size_t(4 * n), 0) == 0
    host = (ctypes.c_float * n)(*([rank + 1.0] * n))
    assert acl.aclrtMemcpy(buf, ctypes.c_size_t(4 * n), host, ctypes.c_size_t(4 * n), 1) == 0
    if rank != 0:
        dist.barrier(group=cpu)
    previous = acl.pyaclnn_stub_hazard_set_mode(1)
    acl.pyaclnn_stub_hazards(None, 0, 1)
    out["call"] = hccl.HcclAllReduce(buf, buf, ctypes.c_uint64(n), 4, 0, comm, s1)
    if rank == 0:
        assert acl.aclrtRecordEvent(ev, s1) == 0
        status = ctypes.c_int(-1)
        assert acl.aclrtQueryEventStatus(ev, ctypes.byref(status)) == 0
        out["before_peer"] = status.value  # ACL_EVENT_RECORDED_STATUS_NOT_READY (0)
        # another stream copies the receive buffer without waiting for the event
        assert acl.aclrtMemcpyAsync(copy, ctypes.c_size_t(4 * n), buf, ctypes.c_size_t(4 * n), 3, s2) == 0
        dist.barrier(group=cpu)
        assert acl.aclrtSynchronizeEvent(ev) == 0
        assert acl.aclrtQueryEventStatus(ev, ctypes.byref(status)) == 0
        out["after"] = status.value
        found = (Hazard * 8)()
        count = acl.pyaclnn_stub_hazards(found, 8, 1)
        out["hazards"] = [(h.kind, h.op.decode(), h.other_op.decode()) for h in found[:count]]
    out["sync"] = acl.aclrtSynchronizeStream(s1)
    assert acl.aclrtSynchronizeStream(s2) == 0  # the unordered copy is done before its buffer is used again
    acl.pyaclnn_stub_hazard_set_mode(previous)
    assert acl.aclrtMemcpy(host, ctypes.c_size_t(4 * n), buf, ctypes.c_size_t(4 * n), 2) == 0
    total = sum(range(1, WORLD + 1))
    out["sum_ok"] = all(v == total for v in host)
    # captured into a model, the collective runs at each replay, not when queued
    model = vp()
    assert acl.aclmdlRICaptureBegin(s1, 0) == 0
    assert hccl.HcclAllReduce(buf, buf, ctypes.c_uint64(n), 4, 0, comm, s1) == 0
    assert acl.aclmdlRICaptureEnd(s1, ctypes.byref(model)) == 0
    assert acl.aclrtMemcpy(host, ctypes.c_size_t(4 * n), buf, ctypes.c_size_t(4 * n), 2) == 0
    out["capture_not_run"] = all(v == total for v in host)
    for _ in range(2):
        assert acl.aclmdlRIExecuteAsync(model, s1) == 0
    assert acl.aclrtSynchronizeStream(s1) == 0 and acl.aclmdlRIDestroy(model) == 0
    assert acl.aclrtMemcpy(host, ctypes.c_size_t(4 * n), buf, ctypes.c_size_t(4 * n), 2) == 0
    out["replays_ok"] = all(v == total * WORLD * WORLD for v in host)
    out["alltoallv_gaps"] = alltoallv_with_gaps(rank, acl, hccl, comm, s1, buf, copy)
    assert hccl.HcclCommDestroy(comm) == 0
    for handle in (buf, copy):
        acl.aclrtFree(handle)
    acl.aclrtDestroyEvent(ev)
    for handle in (s1, s2):
        acl.aclrtDestroyStream(handle)
    return out


def alltoallv_with_gaps(rank, acl, hccl, comm, stream, send, recv):
    """HcclAlltoAllV with displacements that leave gaps (torch_npu's are always packed): rank r sends 1 + j
    elements from 4j to rank j and receives 1 + r elements from rank j at 4j + 1; the gaps keep their -1."""
    u64 = ctypes.c_uint64 * WORLD
    scounts, sdispls = u64(*[1 + j for j in range(WORLD)]), u64(*[4 * j for j in range(WORLD)])
    rcounts, rdispls = u64(*[1 + rank] * WORLD), u64(*[4 * j + 1 for j in range(WORLD)])
    size = 4 * 4 * WORLD + 4
    host = (ctypes.c_float * (4 * WORLD + 1))(*[100.0 * rank + i for i in range(4 * WORLD + 1)])
    assert acl.aclrtMemcpy(send, ctypes.c_size_t(size), host, ctypes.c_size_t(size), 1) == 0
    host = (ctypes.c_float * (4 * WORLD + 1))(*[-1.0] * (4 * WORLD + 1))
    assert acl.aclrtMemcpy(recv, ctypes.c_size_t(size), host, ctypes.c_size_t(size), 1) == 0
    assert hccl.HcclAlltoAllV(send, scounts, sdispls, 4, recv, rcounts, rdispls, 4, comm, stream) == 0
    assert acl.aclrtSynchronizeStream(stream) == 0
    assert acl.aclrtMemcpy(host, ctypes.c_size_t(size), recv, ctypes.c_size_t(size), 2) == 0
    want = [-1.0] * (4 * WORLD + 1)
    for j in range(WORLD):  # rank j's block for this rank starts at 4 * rank of its send buffer
        for k in range(1 + rank):
            want[4 * j + 1 + k] = 100.0 * j + 4 * rank + k
    return list(host) == want


def run(rank):
    torch.npu.set_device(0)
    dist.init_process_group("hccl", init_method=f"tcp://127.0.0.1:{PORT}", rank=rank, world_size=WORLD,
                            timeout=timedelta(seconds=30))
    cpu = dist.new_group(backend="gloo")
    ops = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX,
           "min": dist.ReduceOp.MIN}
    result = {"rank": rank, "mismatch": [], "checked": 0, "dead": None}

    def same(name, got, want):
        result["checked"] += 1
        if got.dtype != want.dtype or not torch.equal(got, want):
            result["mismatch"].append(name)

    for d, dtype in enumerate(DTYPES):
        for o, (op_name, op) in enumerate(ops.items()):
            x = data(dtype, d * 10 + o, rank)
            on_npu = x.npu()
            dist.all_reduce(on_npu, op=op)
            on_cpu = x.clone()
            dist.all_reduce(on_cpu, op=op, group=cpu)
            same(f"all_reduce {op_name} {dtype}", on_npu.cpu(), on_cpu)
        x = data(dtype, 99 + d, rank)
        on_npu = x.npu()
        dist.broadcast(on_npu, src=WORLD - 1)
        on_cpu = x.clone()
        dist.broadcast(on_cpu, src=WORLD - 1, group=cpu)
        same(f"broadcast {dtype}", on_npu.cpu(), on_cpu)
        x = data(dtype, 199 + d, rank)[:31]
        got = [torch.empty_like(x).npu() for _ in range(WORLD)]
        dist.all_gather(got, x.npu())
        want = [torch.empty_like(x) for _ in range(WORLD)]
        dist.all_gather(want, x, group=cpu)
        same(f"all_gather {dtype}", torch.cat([t.cpu() for t in got]), torch.cat(want))
        x = data(dtype, 299 + d, rank)[:8 * WORLD]
        got, want = torch.empty_like(x).npu(), torch.empty_like(x)
        dist.all_to_all_single(got, x.npu())
        dist.all_to_all_single(want, x, group=cpu)
        same(f"all_to_all {dtype}", got.cpu(), want)
        for o, (op_name, op) in enumerate(ops.items()):
            x = data(dtype, 399 + d * 10 + o, rank)[:8 * WORLD]
            got, want = torch.empty(8, dtype=dtype).npu(), torch.empty(8, dtype=dtype)
            dist.reduce_scatter_tensor(got, x.npu(), op=op)
            dist.reduce_scatter(want, list(x.split(8)), op=op, group=cpu)
            same(f"reduce_scatter {op_name} {dtype}", got.cpu(), want)
            # HcclReduce: only the root's result is defined (gloo leaves partial sums elsewhere)
            x = data(dtype, 499 + d * 10 + o, rank)[:19]
            on_npu, on_cpu = x.npu(), x.clone()
            dist.reduce(on_npu, dst=WORLD - 1, op=op)
            dist.reduce(on_cpu, dst=WORLD - 1, op=op, group=cpu)
            if rank == WORLD - 1:
                same(f"reduce {op_name} {dtype}", on_npu.cpu(), on_cpu)
        x = data(dtype, 599 + d, rank)[:5 * WORLD]
        got, want = torch.empty(5, dtype=dtype).npu(), torch.empty(5, dtype=dtype)
        dist.scatter(got, list(x.npu().split(5)) if rank == 0 else None, src=0)
        dist.scatter(want, list(x.split(5)) if rank == 0 else None, src=0, group=cpu)
        same(f"scatter {dtype}", got.cpu(), want)
        # HcclAlltoAllV: rank r sends 1 + r + 2j elements to rank j
        sends = [1 + rank + 2 * j for j in range(WORLD)]
        recvs = [1 + j + 2 * rank for j in range(WORLD)]
        x = data(dtype, 699 + d, rank)[:sum(sends)]
        got, want = torch.empty(sum(recvs), dtype=dtype).npu(), torch.empty(sum(recvs), dtype=dtype)
        dist.all_to_all_single(got, x.npu(), recvs, sends)
        dist.all_to_all_single(want, x, recvs, sends, group=cpu)
        same(f"all_to_all_v {dtype}", got.cpu(), want)
        # HcclAlltoAllVC (torch_npu's all_to_all_vc): the whole count matrix, [i][j] = what rank i sends to rank j
        matrix = [[2 + i + 3 * j for j in range(WORLD)] for i in range(WORLD)]
        sends, recvs = matrix[rank], [matrix[j][rank] for j in range(WORLD)]
        x = data(dtype, 749 + d, rank)[:sum(sends)]
        got, want = torch.empty(sum(recvs), dtype=dtype).npu(), torch.empty(sum(recvs), dtype=dtype)
        torch_npu.distributed.all_to_all_vc(got, x.npu(), matrix)
        dist.all_to_all_single(want, x, recvs, sends, group=cpu)
        same(f"all_to_all_vc {dtype}", got.cpu(), want)
        # HcclAllGatherV / HcclReduceScatterV (torch_npu's uneven forms): rank j's block has 3 + 2j elements
        sizes = [3 + 2 * j for j in range(WORLD)]
        x = data(dtype, 799 + d, rank)[:sizes[rank]]
        got = torch.empty(sum(sizes), dtype=dtype).npu()
        torch_npu.distributed.all_gather_into_tensor_uneven(got, x.npu(), sizes)
        want = torch.cat([data(dtype, 799 + d, j)[:sizes[j]] for j in range(WORLD)])
        same(f"all_gather_v {dtype}", got.cpu(), want)
        x = data(dtype, 899 + d, rank)[:sum(sizes)]
        got = torch.empty(sizes[rank], dtype=dtype).npu()
        torch_npu.distributed.reduce_scatter_tensor_uneven(got, x.npu(), sizes, op=dist.ReduceOp.MAX)
        want = x.clone()
        dist.all_reduce(want, op=dist.ReduceOp.MAX, group=cpu)
        same(f"reduce_scatter_v max {dtype}", got.cpu(), want[sum(sizes[:rank]):sum(sizes[:rank + 1])])
        # HcclBatchSendRecv: a ring, each rank sends to the next and receives from the previous
        x = data(dtype, 999 + d, rank)
        got = torch.empty_like(x).npu()
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, x.npu(), (rank + 1) % WORLD),
                                        dist.P2POp(dist.irecv, got, (rank - 1) % WORLD)])
        for work in works:
            work.wait()
        same(f"batch_send_recv {dtype}", got.cpu(), data(dtype, 999 + d, (rank - 1) % WORLD))

    # point to point: rank 0 sends to the last rank (torch_npu makes a 2-rank communicator for the pair)
    x = data(torch.float32, 7, 0)
    if rank == 0:
        dist.send(x.npu(), WORLD - 1)
    elif rank == WORLD - 1:
        got = torch.zeros_like(x).npu()
        dist.recv(got, 0)
        same("send/recv", got.cpu(), x)

    # stream order: the collective reads what the queued operator wrote; later work sees its result
    y = torch.ones(1000, device="npu") * (rank + 1)
    dist.all_reduce(y)
    z = (y * 2).sum()
    torch.npu.synchronize()
    same("stream order", z.cpu().reshape(1), torch.tensor([2000.0 * sum(range(1, WORLD + 1))]))
    dist.barrier()
    result["stream_task"] = stream_task(rank, cpu)
    result["ddp_max_abs_diff"] = ddp_against_single_process(rank)

    # a rank that never arrives: only rank 0 uses a new group; its communicator setup gives up after
    # HCCL_CONNECT_TIMEOUT instead of waiting forever (the other ranks wait on the cpu group meanwhile)
    late = dist.new_group(list(range(WORLD)))
    if rank == 0:
        start = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4, device="npu"), group=late)
            torch.npu.synchronize()
            result["absent"] = "no error"
        except Exception as err:  # noqa: BLE001 - the test reads the message
            result["absent"] = str(err)[:2000]
        result["absent_seconds"] = time.monotonic() - start
    dist.barrier(group=cpu)

    if os.environ.get("HCCL_TEST_KILL") == "1":
        if rank == WORLD - 1:
            print(json.dumps(result), flush=True)
            os._exit(0)  # dies without a goodbye
        try:
            t = torch.ones(1 << 16, device="npu")
            dist.all_reduce(t)
            torch.npu.synchronize()
            result["dead"] = "no error"
        except Exception as err:  # noqa: BLE001 - the test reads the message
            result["dead"] = str(err)[:2000]
    return result


def peer_check(rank, n=3):
    """A dead peer named among 3 ranks (the emulator's pyaclnn._hccl_peers on plain ProcessGroupGloo, no device):
    each rank learns the others' addresses once connected, the last one dies, and the survivors map gloo's error
    to a rank. Forked here, where torch is already imported, to save the import."""
    from pyaclnn._hccl_peers import learn, peer_of
    t = timedelta(seconds=30)
    store = dist.TCPStore("127.0.0.1", PEER_PORT, is_master=rank == 0, wait_for_workers=False, timeout=t)
    prefixed = dist.PrefixStore("peer-check", store)
    group = dist.ProcessGroupGloo(prefixed, rank, n, t)
    peers = learn(prefixed, rank, n)
    group.allreduce([torch.ones(4)]).wait()
    if rank == n - 1:
        os._exit(0)
    try:
        group.allreduce([torch.ones(1 << 12)]).wait()
        named = "no error"
    except Exception as err:  # noqa: BLE001 - the test reads which rank it names
        named = peer_of(str(err), peers)
    # one write: the two survivors print at the same moment (print writes the newline separately when unbuffered)
    line = json.dumps({"peer_check": rank, "named": named, "peers": sorted(set(peers.values()))}) + "\n"
    os.write(sys.stdout.fileno(), line.encode())
    # Neither survivor leaves before both have their error: a survivor's exit closes its connection, and the
    # other, still waiting on its allreduce, would then name it instead of the dead rank.
    store.set(f"peer-check-done-{rank}", "1")
    try:
        store.wait([f"peer-check-done-{1 - rank}"])
    except Exception:  # noqa: BLE001 - rank 0 (the store's server) may have left once both had answered
        pass


def fork_all(target, ranks, children):
    for rank in ranks:
        pid = os.fork()
        if pid == 0:
            try:
                target(rank)
            finally:
                os._exit(0)
        children[pid] = rank


def main():
    children = {}
    fork_all(lambda rank: print(json.dumps(run(rank)), flush=True), range(WORLD), children)
    wait_for(children, "rank", float(os.environ.get("HCCL_TEST_RANK_TIMEOUT", "60")))
    if PEER_PORT:
        fork_all(peer_check, range(3), children)
        wait_for(children, "peer_check", 40)
    os._exit(0)  # torch_npu's exit-time teardown takes seconds and this process used no device


def wait_for(children, key, seconds):
    """Reaps the children; one still running after `seconds` is killed and reported as hung."""
    deadline = time.monotonic() + seconds
    while children and time.monotonic() < deadline:
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid:
            children.pop(pid, None)
        else:
            time.sleep(0.05)
    for pid, rank in children.items():
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print(json.dumps({key: rank, "hung": True}), flush=True)
    children.clear()


main()
