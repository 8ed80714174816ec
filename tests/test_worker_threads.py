"""The emulator's own threads.

* Worker threads blocked every signal, so the kernel killed the process at a fault on one without
  running any handler: ASan printed no report for a fault in a stream task or a kernel. Stream workers
  and the kernels' pool threads now block only the asynchronous signals (SIGINT, SIGALRM, SIGTERM, ...
  stay with the application's threads) and let the synchronous fault signals through
  (tests/c/worker_fault.c).
* 2000 streams created and destroyed left 2000 idle worker threads until aclFinalize; a destroyed
  stream's worker now retires after idling briefly in the pool (tests/c/stream_threads.c).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env

FAULTS = [signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT, signal.SIGTRAP]
ASYNC = [signal.SIGINT, signal.SIGALRM, signal.SIGTERM, signal.SIGCHLD, signal.SIGUSR1, signal.SIGHUP]
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


@pytest.fixture(scope="module")
def fault_driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, REPO_ROOT / "tests" / "c" / "worker_fault.c")


def blocked(mask_hex: str) -> set[int]:
    mask = int(mask_hex, 16)
    return {sig for sig in range(1, 65) if mask >> (sig - 1) & 1}


def thread_masks(exe) -> dict[str, list[set[int]]]:
    done = subprocess.run([str(exe), "masks"], capture_output=True, text=True, timeout=60, env=subprocess_env())
    assert done.returncode == 0, done.stdout + done.stderr
    kinds: dict[str, list[set[int]]] = {"stream": [], "other": []}
    for kind, _, mask in re.findall(r"^(stream|other) (\d+) ([0-9a-f]+)$", done.stdout, re.M):
        kinds[kind].append(blocked(mask))
    return kinds


def test_stream_workers_block_asynchronous_signals_but_not_faults(fault_driver):
    streams = thread_masks(fault_driver)["stream"]
    assert len(streams) == 3   # two streams and the default stream
    for mask in streams:
        assert not mask & set(FAULTS), sorted(mask & set(FAULTS))
        assert set(ASYNC) <= mask, sorted(set(ASYNC) - mask)


def test_kernel_pool_threads_block_asynchronous_signals_but_not_faults(fault_driver):
    pool = thread_masks(fault_driver)["other"]
    assert pool
    for mask in pool:
        assert not mask & set(FAULTS) and set(ASYNC) <= mask


def run_fault(exe, where: str) -> tuple[int, str]:
    # A deliberate fault: the CI death marker must not count it as a finding.
    how = "plain" if ASAN else "handler"
    done = subprocess.run([str(exe), where, how], capture_output=True, text=True, timeout=60,
                          env=subprocess_env({"PYACLNN_SANITIZER_DEATHS": None}))
    return done.returncode, done.stderr


def check_fault_was_seen(rc: int, err: str) -> None:
    if ASAN:   # the sanitizer's own handler ran on the worker and reported the fault there
        assert re.search(r"ERROR: AddressSanitizer: SEGV on unknown address .* T[1-9]\d*\)", err), err
    else:      # killed by the kernel (-11) on main: the handler never ran
        assert rc == 42, f"exit {rc}\n{err}"
        assert "handled signal 11 at 0x" in err and "on a worker thread" in err, err


def test_a_fault_in_a_stream_task_reaches_the_process_signal_handler(fault_driver):
    check_fault_was_seen(*run_fault(fault_driver, "stream"))


def test_a_fault_in_a_kernel_pool_thread_reaches_the_process_signal_handler(fault_driver):
    check_fault_was_seen(*run_fault(fault_driver, "pool"))


def test_destroyed_streams_leave_no_worker_threads(tmp_path_factory):
    exe = build_c_driver(tmp_path_factory, REPO_ROOT / "tests" / "c" / "stream_threads.c")
    n = 300 if ASAN else 2000
    done = subprocess.run([str(exe), str(n)], capture_output=True, text=True, timeout=120, env=subprocess_env())
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    got = {m[1]: m[2].split() for m in re.finditer(r"^(\w+) (.*)$", done.stdout, re.M)}
    base = int(got["base"][0])
    assert int(got["created"][0]) >= base + n, out
    # on main: base + 2000 threads after 5 s (they stayed until aclFinalize)
    assert int(got["destroyed"][0]) <= base and float(got["destroyed"][1]) < 3.0, out
    assert "reuse" in got, out                 # pooled objects get a new worker
    assert int(got["finalized"][0]) == 1, out  # and aclFinalize leaves only the main thread
