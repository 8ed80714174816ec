"""Which record an event wait is for (tests/c/event_order.c).

aclrtStreamWaitEvent (and aclrtSynchronizeEvent) wait for the record that was latest when they were
called, as CANN and CUDA do: a later record of the same event on an idle stream must not release
them. The hazard checker follows the same rule, so the issue's program is correct for both, and the
same program written the other way round (the wait enqueued before the record it needs) is reported.
"""
from __future__ import annotations

import re
import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env

SOURCE = REPO_ROOT / "tests" / "c" / "event_order.c"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, SOURCE)


def run(exe, mode: str, hazards: str = "off") -> tuple[float, list[str], str]:
    env = subprocess_env({"PYACLNN_STUB_HAZARDS": hazards, "ASAN_OPTIONS": "detect_leaks=0"})
    done = subprocess.run([str(exe), mode], capture_output=True, text=True, timeout=60, env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    value = float(re.search(r"^value (\S+)$", done.stdout, re.M).group(1))
    kinds = re.search(r"^findings \d+(.*)$", done.stdout, re.M).group(1).split()
    return value, kinds, out


@pytest.mark.parametrize("hazards", ["off", "error"])
@pytest.mark.parametrize("mode", ["rerecord", "sync_rerecord", "reset", "destroyed"])
def test_a_wait_is_for_the_record_latest_when_it_was_enqueued(driver, mode, hazards):
    # rerecord is the program: B copied 0 where A wrote 7 (C's later record released B's wait);
    # sync_rerecord is the same for a host synchronisation. Both failed so before the fix.
    value, kinds, out = run(driver, mode, hazards)
    assert value == 7.0, out
    assert kinds == [], out


def test_the_program_written_the_other_way_round_is_reported(driver):
    _, kinds, out = run(driver, "reversed", "report")
    assert kinds == ["cross-stream"], out
    assert "slow_write" in out   # the conflicting task is named
    _, kinds, out = run(driver, "reversed", "error")
    assert kinds == ["cross-stream"] and "status 507004" in out, out


def test_a_wait_for_a_never_recorded_or_reset_event_waits_for_nothing(driver):
    value, kinds, out = run(driver, "never", "error")
    assert "b done before a: 1" in out and value == 0.0 and kinds == [], out
