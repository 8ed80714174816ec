"""Races between threads sharing memory, executors, events and streams.

Runs the C driver tests/c/races.c (see its header) against the stub in use. Each mode provokes one
race many times over, with spinning barriers and varied delays so that the race windows are crossed
at many points, and checks the outcome the emulator promises:

* aclrtFree racing aclrtMemsetAsync / aclrtMemcpyAsync of the same block: the free succeeds, the copy
  is either refused or runs on memory that is still allocated (the queued task pins it). Before the
  fix the task wrote into the released (unmapped) block: SIGSEGV, and ASan's heap-use-after-free.
* one single-use executor launched by four threads at once: exactly one launch is accepted, the
  others get ACLNN_ERR_PARAM_INVALID (161002), and nothing reads a block the winner's launch freed.
* aclrtStreamWaitEvent racing an aclrtRecordEvent whose stream is being destroyed: the waiting
  stream always drains. Before the fix it hung within a few hundred rounds (a wait picked up a record
  id that was never queued).
* aclrtFree while an unrelated stream is busy releases the memory at once (before the fix every free
  was deferred until all streams were idle: +768 MiB resident over 48 frees of 16 MiB).

Under ASan/TSan (.ci/run) the same driver runs against the sanitizer builds; outside them it is built
with a free() that poisons blocks, so reading a freed executor gives garbage instead of old values.
"""
from __future__ import annotations

import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env

import pyaclnn

SOURCE = REPO_ROOT / "tests" / "c" / "races.c"


def _sanitized(libdir) -> bool:
    out = subprocess.run(["ldd", f"{libdir}/libascendcl.so"], capture_output=True, text=True).stdout
    return "libasan" in out or "libtsan" in out


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    libdir = pyaclnn.get_library_dir()
    poison = [] if _sanitized(libdir) else ["-DPOISON_FREE"]
    return build_c_driver(tmp_path_factory, SOURCE, *poison)


def run(exe, mode: str, iterations: int) -> None:
    done = subprocess.run([str(exe), mode, str(iterations)], capture_output=True, text=True, timeout=150,
                          env=subprocess_env({"ASAN_OPTIONS": "detect_leaks=0:quarantine_size_mb=16",
                                              "PYACLNN_STUB_HAZARDS": "off"}))   # races on purpose
    assert done.returncode != 3, f"hang (watchdog):\n{done.stderr}"
    assert done.returncode >= 0, f"killed by signal {-done.returncode}\n{done.stderr}"
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip() == f"ok {mode}"


def test_free_racing_async_copy_and_memset_never_writes_released_memory(driver):
    run(driver, "free_vs_copy", 4000)


def test_single_use_executor_launched_from_four_threads_runs_once(driver):
    run(driver, "executor_twice", 3000)


def test_stream_wait_never_picks_a_record_that_failed_to_queue(driver):
    run(driver, "record_vs_destroy", 1500)


def test_free_is_not_deferred_by_an_unrelated_busy_stream(driver):
    run(driver, "free_while_busy", 48)
