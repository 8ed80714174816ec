"""Concurrency: several host threads with their own streams on several emulated devices.

* The C driver tests/c/stress_streams.c (launch chains fed by async copies, two streams per thread
  linked by events, half the threads re-pointing one repeatable executor) must give the histories of
  a serial run and of a host model of the operator, every time, within its watchdog. CI also runs it
  against the ThreadSanitizer build of the stub (.ci/run).
* The same shape from Python threads through ctypes (which releases the GIL around each C call), so
  the binding's own call path is exercised concurrently too.
"""
from __future__ import annotations

import ctypes
import subprocess
import threading

import pytest
from helpers import REPO_ROOT, build_c_driver, run_python, subprocess_env

import pyaclnn
from pyaclnn import capi

STRESS_SOURCE = REPO_ROOT / "tests" / "c" / "stress_streams.c"
RESULT = "stress: threads={t} devices={d} iterations={n} rounds={r} checksum="


@pytest.fixture(scope="module")
def stress_driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, STRESS_SOURCE)


def run_stress(exe, threads: int, devices: int, iterations: int, rounds: int = 1):
    args = [str(exe), "-t", str(threads), "-d", str(devices), "-n", str(iterations), "-r", str(rounds), "-w", "60"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, env=subprocess_env())
    assert done.returncode != 3, f"watchdog fired (deadlock):\n{done.stderr}"
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith(RESULT.format(t=threads, d=devices, n=iterations, r=rounds)) and line.endswith(" OK"), line
    return line


def test_stress_driver_matches_serial_run_repeatedly(stress_driver):
    lines = {run_stress(stress_driver, threads=6, devices=2, iterations=96, rounds=2) for _ in range(5)}
    assert len(lines) == 1, lines           # same checksum every time


@pytest.mark.parametrize("threads,devices", [(1, 1), (3, 3), (8, 2)])
def test_stress_driver_shapes(stress_driver, threads, devices):
    run_stress(stress_driver, threads=threads, devices=devices, iterations=48)


def test_stress_driver_checksum_depends_on_the_workload(stress_driver):
    """The checksum line is not a constant: different iteration counts give different histories."""
    a = run_stress(stress_driver, threads=2, devices=1, iterations=20)
    b = run_stress(stress_driver, threads=2, devices=1, iterations=21)
    assert a.split("checksum=")[1] != b.split("checksum=")[1]


# ---- the same from Python threads ----------------------------------------------------------------

PY_STRESS = r"""
import ctypes, sys, threading
import numpy as np
from pyaclnn import capi
sys.path.insert(0, {tests!r})
from helpers import create_tensor

C = ctypes
N, THREADS, DEVICES = 60, 4, 2

def ok(status, what):
    if status != 0:
        raise RuntimeError(f"{{what}} -> {{status}}: {{capi.aclGetRecentErrMsg()}}")

def found_inf(tid, i):
    return (tid * 7 + i * 3) % 5 == 0

def model(tid):
    # Spec A.3 in float32: backoff 0.5 on inf, growth 2.0 every 3 clean steps.
    scale, tracker, out = np.float32(1024), 0, []
    for i in range(N):
        if found_inf(tid, i):
            scale, tracker = np.float32(scale * np.float32(0.5)), 0
        elif tracker + 1 == 3:
            scale, tracker = np.float32(scale * np.float32(2.0)), 0
        else:
            tracker += 1
        out.append((float(scale), tracker))
    return out

def malloc(n):
    p = C.c_void_p()
    ok(capi.aclrtMalloc(C.byref(p), n, 0), "aclrtMalloc")
    return p.value

def workload(tid, results):
    ok(capi.aclrtSetDevice(tid % DEVICES), "aclrtSetDevice")
    a, b, ev = C.c_void_p(), C.c_void_p(), C.c_void_p()
    ok(capi.aclrtCreateStream(C.byref(a)), "stream a")
    ok(capi.aclrtCreateStream(C.byref(b)), "stream b")
    ok(capi.aclrtCreateEvent(C.byref(ev)), "event")
    scale, tracker, found = malloc(4), malloc(4), malloc(4 * N)
    hist_s, hist_t = malloc(4 * N), malloc(4 * N)
    init = np.array([1024], np.float32)
    ok(capi.aclrtMemcpy(scale, 4, init.ctypes.data, 4, 1), "init scale")
    ok(capi.aclrtMemset(tracker, 4, 0, 4), "init tracker")
    flags = np.array([1.0 if found_inf(tid, i) else 0.0 for i in range(N)], np.float32)
    t_scale = create_tensor([1], capi.ACL_FLOAT, scale)
    t_tracker = create_tensor([1], capi.ACL_INT32, tracker)
    t_found = create_tensor([1], capi.ACL_FLOAT, found)
    for i in range(N):
        ok(capi.aclrtMemcpyAsync(found + 4 * i, 4, flags.ctypes.data + 4 * i, 4, 1, a), "found")
        ok(capi.aclSetRawTensorAddr(t_found, found + 4 * i), "repoint")
        ws, ex = C.c_uint64(), C.c_void_p()
        ok(capi.aclnnAmpUpdateScaleGetWorkspaceSize(t_scale, t_tracker, t_found, 2.0, 0.5, 3, t_scale, t_tracker,
                                                    C.byref(ws), C.byref(ex)), "phase 1")
        ok(capi.aclnnAmpUpdateScale(None, 0, ex, a), "phase 2")
        ok(capi.aclrtRecordEvent(ev, a), "record")
        ok(capi.aclrtStreamWaitEvent(b, ev), "wait")
        ok(capi.aclrtMemcpyAsync(hist_s + 4 * i, 4, scale, 4, 3, b), "history scale")
        ok(capi.aclrtMemcpyAsync(hist_t + 4 * i, 4, tracker, 4, 3, b), "history tracker")
        ok(capi.aclrtRecordEvent(ev, b), "record b")
        ok(capi.aclrtStreamWaitEvent(a, ev), "wait a")
    ok(capi.aclrtSynchronizeStream(a), "sync a")
    ok(capi.aclrtSynchronizeStream(b), "sync b")
    s_out, t_out = np.zeros(N, np.float32), np.zeros(N, np.int32)
    ok(capi.aclrtMemcpy(s_out.ctypes.data, 4 * N, hist_s, 4 * N, 2), "read scale")
    ok(capi.aclrtMemcpy(t_out.ctypes.data, 4 * N, hist_t, 4 * N, 2), "read tracker")
    for t in (t_scale, t_tracker, t_found):
        ok(capi.aclDestroyTensor(t), "destroy tensor")
    for p in (scale, tracker, found, hist_s, hist_t):
        ok(capi.aclrtFree(p), "free")
    ok(capi.aclrtDestroyEvent(ev), "destroy event")
    ok(capi.aclrtDestroyStream(a), "destroy a")
    ok(capi.aclrtDestroyStream(b), "destroy b")
    ok(capi.aclrtResetDevice(tid % DEVICES), "reset")
    results[tid] = list(zip(s_out.tolist(), t_out.tolist(), strict=True))

serial = {{}}
for tid in range(THREADS):
    workload(tid, serial)
for tid in range(THREADS):
    assert serial[tid] == model(tid), (tid, serial[tid][:5], model(tid)[:5])
for rnd in range(3):
    threaded, errors = {{}}, []
    def run(tid):
        try:
            workload(tid, threaded)
        except Exception as exc:       # reported below
            errors.append(repr(exc))
    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in threads: t.start()
    for t in threads: t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread did not finish within 60 s"
    assert not errors, errors
    assert threaded == serial, rnd
from pyaclnn._stubinfo import live_counts
left = {{k: v for k, v in live_counts().items() if v}}
assert not left, left
print("python stress OK")
"""


def test_python_threads_match_serial_run_and_model():
    code = PY_STRESS.format(tests=str(REPO_ROOT / "tests"))
    rc, out, err = run_python(code, env_overrides={"PYACLNN_STUB_DEVICE_COUNT": "2"}, timeout=180)
    assert rc == 0, out + err
    assert "python stress OK" in out


def test_concurrent_destroys_of_the_same_handles(acl):
    """Four threads destroy the same tensors and events at once: one destroy of each handle succeeds,
    the three others are refused with a status (never a double free or a crash)."""
    results: list[int] = []
    lock = threading.Lock()
    tensors = [_tensor() for _ in range(200)]
    events = [_event() for _ in range(50)]

    def worker():
        local = [capi.aclDestroyTensor(t) for t in tensors] + [capi.aclrtDestroyEvent(e) for e in events]
        capi.aclGetRecentErrMsg()          # this thread's refusals leave messages: read them
        with lock:
            results.extend(local)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert results.count(0) == len(tensors) + len(events)
    refused = [r for r in results if r]
    assert len(refused) == 3 * (len(tensors) + len(events))
    assert set(refused) <= {capi.ACLNN_ERR_PARAM_INVALID, capi.ACL_ERROR_RT_PARAM_INVALID}


def _tensor() -> int:
    dims = (ctypes.c_int64 * 1)(4)
    t = capi.aclCreateTensor(dims, 1, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, dims, 1, None)
    assert t
    return t


def _event() -> int:
    e = ctypes.c_void_p()
    assert capi.aclrtCreateEvent(ctypes.byref(e)) == 0
    return e.value
