"""pytest plugin loaded in the runner's child processes (``-p pyaclnn.suite.plugin``): one JSON line per test
outcome, written and flushed as it happens to the file named by PYACLNN_SUITE_LOG, so that the runner knows
what ran even when a later test kills the process."""
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
