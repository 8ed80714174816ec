"""pytest plugin loaded in the runner's child processes (``-p pyaclnn.suite.plugin``): one JSON line per test
outcome (and one as each test starts), written and flushed as it happens to the file named by PYACLNN_SUITE_LOG,
so that the runner knows what ran, and what was running, even when a test kills or hangs the process.

It also seeds NumPy's global generator before every test. op-plugin's CI runs each file as a script
(``python test_x.py``: its ``if __name__ == "__main__":`` block often calls ``np.random.seed(N)``, and
torch_npu's ``TestCase.setUp`` seeds torch and ``random`` but not NumPy); under pytest that block never runs,
so the data of ``create_common_tensor`` would change from run to run and a test near its tolerance would
pass or fail by chance. Seeding each test (with the file's own ``__main__`` seed, else 0) gives every test
the same data in every run, whatever chunk or order it runs in; ``PYACLNN_SUITE_SEED=off`` leaves NumPy
alone."""
from __future__ import annotations

import ast
import functools
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


@functools.lru_cache(maxsize=None)
def main_block_seed(path: str) -> int:
    """The constant N of ``np.random.seed(N)`` (or ``numpy.random.seed``) in the file's
    ``if __name__ == "__main__":`` block, or 0."""
    try:
        tree = ast.parse(open(path, "rb").read())
    except (OSError, SyntaxError, ValueError):
        return 0
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            continue
        for call in ast.walk(node):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "seed"
                    and ast.unparse(call.func.value) in ("np.random", "numpy.random") and len(call.args) == 1
                    and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, int)):
                return call.args[0].value
    return 0


def pytest_runtest_setup(item) -> None:
    if os.environ.get("PYACLNN_SUITE_SEED", "").lower() == "off":
        return
    import numpy  # the suite's files all use it; imported here so the plugin loads without it
    numpy.random.seed(main_block_seed(str(item.path)))


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
