"""The emulated libhccl under torch.distributed: 2 ranks with backend "hccl" on npu, each compared in the same
process with backend "gloo" on cpu (all-reduce, reduce-scatter and reduce for every reduce op and
fp32/fp16/bf16/int32/int8; broadcast, all-gather, all-to-all, all-to-all with splits or a count matrix, scatter,
torch_npu's uneven all-gather / reduce-scatter and batch_isend_irecv of each dtype; send/recv, barrier, stream
order), a collective as a stream task (events, hazard checker, capture) through the C API, DistributedDataParallel
against one process, then one rank dies and the other's next all-reduce must fail with HCCL's code, not hang.
One process imports torch_npu and forks the ranks (tests/_hccl_rank.py), for the whole file. Plus the port of the
vendor's C++ all-reduce sample (examples/cpp/hccl_allreduce.cpp: no Python of its own, one thread per device),
compiled and run on 2 devices; docs/hccl.md."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import helpers
from _math_ops import torch_npu_reason

RANK = Path(__file__).with_name("_hccl_rank.py")
TIMEOUT = 120  # seconds for the pair; a hang fails the test instead of the run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ranks():
    reason = torch_npu_reason()
    if reason is not None:
        pytest.skip(reason)
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("torch_npu is not run under the ASan pass")
    # torch_npu's watchdog takes a process down within a second of an HcclGetCommAsyncError (its default
    # TORCH_HCCL_ASYNC_ERROR_HANDLING=1): off, so the survivor of the dead-rank case reports what it saw
    env = helpers.subprocess_env({"TORCH_NPU_WARNING_DISABLE": "1", "HCCL_TEST_KILL": "1",
                                  "TORCH_HCCL_ASYNC_ERROR_HANDLING": "0",
                                  "HCCL_CONNECT_TIMEOUT": "4", "HCCL_EXEC_TIMEOUT": "60",
                                  "HCCL_TEST_RANK_TIMEOUT": str(TIMEOUT - 20)})
    proc = subprocess.run([sys.executable, "-m", "pyaclnn", "exec", "--", sys.executable, str(RANK), "2",
                           str(_free_port()), str(_free_port())], capture_output=True, env=env, text=True,
                          timeout=TIMEOUT)
    results, peer_check = {}, {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            if "peer_check" in result:
                peer_check[result["peer_check"]] = result
            else:
                results[result["rank"]] = result
    assert sorted(results) == [0, 1], f"exit {proc.returncode}, stdout {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return results, proc.stderr, peer_check


def test_collectives_equal_gloo(ranks):
    for rank, result in ranks[0].items():
        # 86 checks a rank; the last rank also receives rank 0's send and is the root of 20 reduces
        assert not result.get("hung") and result["mismatch"] == [] and result["checked"] == 86 + 21 * (rank == 1), \
            result


def test_a_collective_is_a_stream_task(ranks):
    # the call returns at once; an event after it completes with the result; another stream reading the receive
    # buffer unordered is a cross-stream hazard against the collective (PYACLNN_HAZARD_CROSS_STREAM = 2); captured,
    # it runs at each replay (two replays: the sum times the rank count, twice); HcclAlltoAllV honours
    # displacements that leave gaps
    for rank, result in ranks[0].items():
        task = result["stream_task"]
        assert task["call"] == 0 and task["sync"] == 0 and task["sum_ok"], task
        assert task["capture_not_run"] and task["replays_ok"] and task["alltoallv_gaps"], task
        if rank == 0:
            assert task["before_peer"] == 0 and task["after"] == 1, task
            assert (2, "memcpy", "HcclAllReduce") in [tuple(h) for h in task["hazards"]], task


def test_distributed_data_parallel_equals_one_process(ranks):
    # fp32 sums in another order: a few ulps of parameters of size ~0.3 (measured 3e-8)
    for result in ranks[0].values():
        assert result["ddp_max_abs_diff"] < 1e-6, result


def test_a_rank_that_never_arrives_times_out(ranks):
    results, err, _ = ranks
    absent = results[0]
    assert absent["absent"] not in (None, "no error") and 4 <= absent["absent_seconds"] < 30, absent
    assert "pyaclnn-hccl: HcclCommInitRootInfo failed on rank 0 with HCCL error 9" in err, err[-3000:]


def test_a_dead_rank_fails_the_other(ranks):
    results, err, _ = ranks
    survivor = results[0]
    # the collective is a stream task: its failure surfaces at the next synchronisation, as a device error
    # naming the call and HCCL's code; the emulator's line names the call, the rank and the code
    assert survivor["dead"] not in (None, "no error")
    assert "507057" in survivor["dead"] and "HcclAllReduce failed with HCCL error 13: the peer is rank 1: " in \
        survivor["dead"], survivor["dead"]
    assert "pyaclnn-hccl: HcclAllReduce failed on rank 0 (peer: rank 1) with HCCL error 13" in err, err[-3000:]


def test_argument_checks_and_error_strings():
    """The checks made before any transport (in this process, no torch): HCCL's codes for NULL pointers (2),
    bad parameters (1); HcclGetErrorString's texts are hccl_types.h's."""
    import ctypes
    from pyaclnn._stubpaths import stub_library_dir
    lib = ctypes.CDLL(str(Path(stub_library_dir()) / "libhccl.so"))
    lib.HcclGetErrorString.restype = ctypes.c_char_p
    assert [lib.HcclGetErrorString(c) for c in (0, 2, 9, 13, 24, 99)] == [
        b"success", b"empty pointer", b"timeout", b"tcp transfer fail", b"out of memory", b"unknown error"]
    root, comm = ctypes.create_string_buffer(4108), ctypes.c_void_p()
    u32, u64, vp = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p
    assert lib.HcclGetRootInfo(None) == 2
    assert lib.HcclCommInitRootInfo(u32(2), None, u32(0), ctypes.byref(comm)) == 2
    assert lib.HcclCommInitRootInfo(u32(0), root, u32(0), ctypes.byref(comm)) == 1
    assert lib.HcclCommInitRootInfo(u32(2), root, u32(2), ctypes.byref(comm)) == 1
    config = ctypes.create_string_buffer(2240)  # no HcclCommConfigInit: no magic word
    assert lib.HcclCommInitRootInfoConfig(u32(2), root, u32(0), config, ctypes.byref(comm)) == 1
    buf = ctypes.create_string_buffer(64)
    assert lib.HcclAllReduce(buf, buf, u64(4), 4, 4, None, None) == 1       # reduce op 4 does not exist
    assert lib.HcclAllReduce(buf, buf, u64(4), 4, 0, None, None) == 2       # NULL communicator
    assert lib.HcclAllReduce(None, buf, u64(4), 4, 0, vp(1), None) == 2     # NULL send buffer
    fake = ctypes.create_string_buffer(64)                                  # not a communicator
    assert lib.HcclBroadcast(buf, u64(4), 4, u32(0), fake, None) == 1
    # the collectives of the second slice: reduce op first, then NULL pointers (counts arrays too), then the comm
    assert lib.HcclReduce(buf, buf, u64(4), 4, 4, u32(0), None, None) == 1
    assert lib.HcclReduce(buf, buf, u64(4), 4, 0, u32(0), None, None) == 2
    assert lib.HcclScatter(buf, buf, u64(4), 4, u32(0), fake, None) == 1
    assert lib.HcclAlltoAllV(buf, None, buf, 4, buf, buf, buf, 4, fake, None) == 2
    assert lib.HcclAlltoAllV(buf, buf, buf, 4, buf, buf, buf, 3, fake, None) == 1   # two data types
    assert lib.HcclAllGatherV(buf, u64(4), buf, None, buf, 4, fake, None) == 2
    assert lib.HcclAlltoAllVC(buf, None, 4, buf, 4, fake, None) == 2
    assert lib.HcclAlltoAllVC(buf, buf, 4, buf, 0, fake, None) == 1
    assert lib.HcclReduceScatterV(buf, buf, buf, buf, u64(4), 4, 5, fake, None) == 1
    assert lib.HcclReduceScatterV(buf, buf, None, buf, u64(4), 4, 0, fake, None) == 2
    assert lib.HcclBatchSendRecv(None, u32(1), fake, None) == 2
    assert lib.HcclBatchSendRecv(buf, u32(0), None, None) == 2
    size = u32()
    assert lib.HcclGetRankSize(None, ctypes.byref(size)) == 2 and lib.HcclGetRankSize(fake, ctypes.byref(size)) == 1
    assert lib.HcclCommDestroy(None) == 2 and lib.HcclCommDestroy(fake) == 1
    assert lib.HcclGetCommConfigCapability() == 12


# The vendor sample's README ("结果示例", 8 devices): rank r sends 0..N-1, each prints the element-wise sum N * i.
README_8 = "Found 8 NPU device(s) available\n" + "".join(
    f"rankId: {r}, output: [ 0 8 16 24 32 40 48 56 ]\n" for r in range(8))


def _sample_output(n: int) -> str:
    """The README's text for n devices (n = 8 gives it back unchanged)."""
    row = " ".join(str(n * i) for i in range(n))
    return f"Found {n} NPU device(s) available\n" + "".join(f"rankId: {r}, output: [ {row} ]\n" for r in range(n))


def test_sample_output_rule_gives_the_readme():
    assert _sample_output(8) == README_8


# The vendor sample's Makefile: its flags, the toolkit's include/ and lib64/, -lhccl -lascendcl (no rpath, no
# -lpthread: the loader path comes from the toolkit's environment).
SAMPLE_BUILD = ("c++ -std=c++14 -Werror -fstack-protector-strong -fPIE -pie -O2 -s -Wl,-z,relro -Wl,-z,now "
                "-Wl,-z,noexecstack -Wl,--copy-dt-needed-entries main.cc -I\"$ASCEND_HOME_PATH/include\" "
                "-L\"$ASCEND_HOME_PATH/lib64\" -lhccl -lascendcl -o all_reduce")


def test_vendor_cpp_allreduce_sample_port():
    """A C++ program with no Python: libhccl starts the interpreter `pyaclnn exec` names inside it, and each rank
    thread gets a gloo process group of its own. Built and run as the sample's Makefile and README say, inside the
    emulated toolkit's environment (`make` = SAMPLE_BUILD, then `./all_reduce`)."""
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler on PATH")
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("this Python has no shared libpython to start inside a C program")
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("an interpreter started inside the program is not run under the ASan pass")
    pytest.importorskip("torch.distributed", reason="the transport is torch's gloo")
    import tempfile
    exec_ = [sys.executable, "-m", "pyaclnn", "exec", "--"]
    # the connect timeout bounds a rendezvous that never completes (the test then fails, it does not hang)
    env = helpers.subprocess_env({"PYACLNN_STUB_DEVICE_COUNT": "2", "HCCL_CONNECT_TIMEOUT": "20",
                                  "PYACLNN_PYTHON": None, "PYACLNN_LIBPYTHON": None})
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(helpers.REPO_ROOT / "examples" / "cpp" / "hccl_allreduce.cpp", Path(tmp) / "main.cc")
        build = subprocess.run(exec_ + ["sh", "-c", SAMPLE_BUILD], capture_output=True, text=True, timeout=180,
                               env=env, cwd=tmp)
        assert build.returncode == 0, build.stderr
        proc = subprocess.run(exec_ + ["./all_reduce"], capture_output=True, text=True, timeout=TIMEOUT, env=env,
                              cwd=tmp)
        # outside `pyaclnn exec` (the libraries found, no interpreter named): HCCL_E_NOT_SUPPORT, said why
        import pyaclnn
        bare = subprocess.run(["./all_reduce"], capture_output=True, text=True, timeout=60, cwd=tmp,
                              env={**env, "LD_LIBRARY_PATH": pyaclnn.get_library_dir()})
    assert proc.returncode == 0 and proc.stdout == _sample_output(2), proc.stdout + proc.stderr
    assert bare.returncode == 5 and "retcode: 5" in bare.stdout, bare.stdout + bare.stderr
    assert "PYACLNN_PYTHON / PYACLNN_LIBPYTHON are not set" in bare.stderr, bare.stderr


def test_refused_entry_points():
    """What neither torch_npu's traced paths nor the vendor's samples reach: HCCL_E_NOT_SUPPORT (5), said why."""
    code = """
        import ctypes
        from pathlib import Path
        from pyaclnn._stubpaths import stub_library_dir
        lib = ctypes.CDLL(str(Path(stub_library_dir()) / "libhccl.so"))
        comm, u32 = ctypes.c_void_p(), ctypes.c_uint32
        print(lib.HcclCommInitClusterInfo(b"rank_table.json", u32(0), ctypes.byref(comm)),
              lib.HcclCommInitClusterInfoConfig(b"rank_table.json", u32(0), None, ctypes.byref(comm)),
              lib.HcclCreateSubCommConfig(ctypes.byref(comm), u32(2), None, ctypes.c_uint64(1), u32(0), None,
                                          ctypes.byref(comm)),
              lib.HcclGroupStart(), lib.HcclGroupEnd())
    """
    rc, out, err = helpers.run_python(code)
    assert rc == 0 and out.split() == ["5"] * 5, out + err
    for name in ("HcclCommInitClusterInfo", "HcclCommInitClusterInfoConfig", "HcclCreateSubCommConfig",
                 "HcclGroupStart", "HcclGroupEnd"):
        assert f"pyaclnn-hccl: {name} is not supported by the emulator" in err, err


def test_peer_address_parsing():
    """gloo's rendezvous record (u64 hostname length, hostname, u64 address length, sockaddr) and /proc/net/tcp's
    address format, built here by hand; an address in gloo's message maps to its rank, IPv4-mapped or not."""
    import struct

    from pyaclnn._hccl_peers import _listener, _proc_addr, peer_of
    sockaddr = struct.pack("<H", 2) + struct.pack(">H", 44305) + bytes([127, 0, 0, 1]) + bytes(120)
    record = struct.pack("<Q", 2) + b"vm" + struct.pack("<Q", len(sockaddr)) + sockaddr + bytes(16)
    assert _listener(record) == ("127.0.0.1", 44305)
    six = struct.pack("<H", 10) + struct.pack(">H", 80) + bytes(4) + bytes(15) + b"\x01" + bytes(104)
    assert _listener(struct.pack("<Q", 0) + struct.pack("<Q", len(six)) + six) == ("::1", 80)
    assert _proc_addr("0100007F:AD11") == ("127.0.0.1", 44305)
    assert _proc_addr("0000000000000000FFFF00000100007F:0050") == ("127.0.0.1", 80)
    peers = {("127.0.0.1", 55989): 3}
    assert peer_of("pair.cc:553] Connection closed by peer [127.0.0.1]:55989. This is", peers) == 3
    assert peer_of("closed by peer [::ffff:127.0.0.1]:55989", peers) == 3
    assert peer_of("closed by peer [127.0.0.1]:55990", peers) is None
    # gloo's message shows the port's bytes swapped (43047 = 0xA827 as 10152 = 0x27A8)
    assert peer_of("Read error [127.0.0.1]:10152: Connection reset by peer", {("127.0.0.1", 43047): 2}) == 2


def test_a_dead_peer_is_named_among_three(ranks):
    """3 ranks (plain ProcessGroupGloo, forked by the rank script after its ranks), each learns its peers'
    addresses after connecting; the last one dies, and the rank named in each survivor's gloo error is 2, whichever
    side opened the connection."""
    peer_check = ranks[2]
    assert peer_check.get(0) == {"peer_check": 0, "named": 2, "peers": [1, 2]}, (peer_check, ranks[1][-2000:])
    assert peer_check.get(1) == {"peer_check": 1, "named": 2, "peers": [0, 2]}, (peer_check, ranks[1][-2000:])
