"""aclFinalize joins the worker threads of destroyed streams, without deadlock.

Runs the C driver tests/c/finalize_workers.c (see its header for the modes) against the stub in
use: a clean shutdown leaves no thread but main (so valgrind finds no thread stack "possibly lost",
tests/test_valgrind.py), pooled stream objects get a new worker when reused, and aclFinalize neither
waits for live streams nor deadlocks inside a stream task nor lets workers keep the process alive.
"""
from __future__ import annotations

import subprocess
import time

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env


SOURCE = REPO_ROOT / "tests" / "c" / "finalize_workers.c"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, SOURCE)


def run(exe, mode: str) -> float:
    start = time.monotonic()
    done = subprocess.run([str(exe), mode], capture_output=True, text=True, timeout=60,
                          env=subprocess_env())
    took = time.monotonic() - start
    assert done.returncode != 3, f"deadlock (watchdog):\n{done.stderr}"
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip() == f"ok {mode}"
    return took


def test_clean_shutdown_leaves_only_the_main_thread_and_reused_streams_work(driver):
    run(driver, "clean")


def test_finalize_does_not_wait_for_a_busy_live_stream(driver):
    run(driver, "busy")


def test_finalize_from_inside_a_stream_task_does_not_deadlock(driver):
    run(driver, "inside")


def test_queued_work_does_not_keep_the_process_alive(driver):
    # 10 s of work is queued; exit() must not wait for it (generous bound for a loaded machine)
    assert run(driver, "exit") < 5.0
