"""pytest plugin loaded in the runner's child processes (``-p pyaclnn.suite.plugin``): one JSON line per test
outcome (and one as each test starts), written and flushed as it happens to the file named by PYACLNN_SUITE_LOG,
so that the runner knows what ran, and what was running, even when a test kills or hangs the process."""
from __future__ import annotations

import json
import os

_LOG = os.environ.get("PYACLNN_SUITE_LOG")


def _write(record: dict) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _message(report) -> str:
    """The exception's own text (not the source lines around it)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    return str(getattr(crash, "message", ""))[:4000]


def pytest_runtest_logstart(nodeid, location) -> None:
    # a test begins: the runner times each file from its first test and knows which file a crash interrupted
    _write({"file": location[0], "start": nodeid})


def pytest_runtest_logreport(report) -> None:
    # a test's outcome: its call phase, or a setup/teardown that failed or skipped it
    if report.when == "call" or report.outcome != "passed":
        text = "" if report.outcome == "passed" else str(report.longrepr)[-4000:]
        _write({"file": report.fspath, "test": report.nodeid, "when": report.when,
                "outcome": report.outcome, "text": text, "message": _message(report)})


def pytest_collectreport(report) -> None:
    if report.outcome == "failed":                  # a file that does not import
        _write({"file": report.fspath, "test": report.nodeid, "when": "collect", "outcome": "failed",
                "text": str(report.longrepr)[-4000:], "message": _message(report)})
