"""Runs test files on the emulator in chunks of child processes: each chunk is one pytest process with the
emulated toolkit's environment (the files share one torch_npu import); a file that crashes the process is run
again alone, one that hangs is stopped at its own timeout, and every file gets a :class:`FileResult`."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

# What torch_npu says when the emulator lacks an operator (the aclnn path; on Ascend 950 also the refusal of
# the aclop fallback).
MISSING = re.compile(r"(aclnn[A-Z]\w*?)(?: or aclnn\w+GetWorkspaceSize)? (?:not found|not in libopapi|does not exist)")
# A file that needs a Python package the environment lacks (op-plugin's foreach tests use hypothesis).
NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
# What torch_npu says after a failed launch: later results in that process cannot be trusted (on Ascend910B4
# a refused aclop launch leaves the next files of a chunk failing with "result error").
POISONED = "The process exits for this inner error"


@dataclass
class FileResult:
    """One test file's outcome: counts per outcome, the first missing aclnn operator, and how the process
    ended ("ok", "crash <signal or rc>", "timeout"). ``upstream``: failures of tests the faults list names
    (pyaclnn.suite.upstream: they fail on any device), not counted as failed."""
    file: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    upstream: int = 0
    missing: str | None = None
    ended: str = "ok"
    first_failure: str = ""
    tests: dict = field(default_factory=dict)

    @property
    def green(self) -> bool:
        """All green: it ran to the end, something passed, and nothing failed (but listed upstream faults)."""
        return self.ended == "ok" and self.passed > 0 and not self.failed and not self.errors

    def as_dict(self) -> dict:
        return {"file": self.file, "passed": self.passed, "failed": self.failed, "errors": self.errors,
                "skipped": self.skipped, "upstream": self.upstream, "missing": self.missing, "ended": self.ended, "green": self.green,
                "first_failure": self.first_failure}


def _is_listed_fault(rec: dict, faults: dict[str, dict]) -> bool:
    """The test is on the faults list and failed the way the list says (its error text in the failure's):
    a listed test that fails otherwise -- say the emulator's fault now -- still counts as failed."""
    f = faults.get(rec["test"])
    return f is not None and (f["error"] in rec.get("message", "") or f["error"] in rec["text"])


def _tally(name: str, records: list[dict], ended: str, faults: dict[str, dict]) -> FileResult:
    r = FileResult(name, ended=ended)
    for rec in records:
        outcome = rec["outcome"]
        if outcome == "passed":
            r.passed += 1
        elif outcome == "skipped":
            r.skipped += 1
        elif _is_listed_fault(rec, faults):
            r.upstream += 1
            r.tests[rec["test"]] = "upstream"
            continue
        elif rec["when"] == "call":
            r.failed += 1
        else:
            r.errors += 1
        r.tests[rec["test"]] = outcome
        if outcome == "failed":
            m = MISSING.search(rec.get("message", "")) or MISSING.search(rec["text"])
            if m and r.missing is None:
                r.missing = m.group(1)
            m = NO_MODULE.search(rec["text"])
            if m and r.missing is None:
                r.missing = f"python module {m.group(1)}"
            if not r.first_failure:
                r.first_failure = rec["text"].strip().splitlines()[-1][:300] if rec["text"].strip() else ""
    return r


class _Log:
    """The plugin's JSON lines, read as they grow: the records, and which file is running since when."""

    def __init__(self, path: str, t0: float):
        self.path, self.offset, self.records = path, 0, []
        self.current: str | None = None          # the file of the last test that started
        self.since = t0                          # when that file's first test started (the process start before)

    def poll(self) -> None:
        with open(self.path, encoding="utf-8") as f:
            f.seek(self.offset)
            text = f.read()
        done = text.rfind("\n") + 1             # a line still being written is read next time
        self.offset += len(text[:done].encode("utf-8"))
        for line in text[:done].splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            if "start" in rec:
                name = Path(rec["file"]).name
                if name != self.current:
                    self.current, self.since = name, time.monotonic()
            else:
                self.records.append(rec)


def _run_chunk(files: list[Path], root: Path, env: dict, timeout: float) -> tuple[list[dict], str, str, str | None]:
    """One pytest process over `files`, killed when one file has run `timeout` seconds (the first file's time
    includes the process's start-up and collection): the plugin's records, how it ended, its output's tail, and
    the file that was running when it ended (None before the first test)."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as log, \
            tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as output:
        log_path = log.name
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "pyaclnn.suite.plugin", "-p", "no:cacheprovider",
               "--continue-on-collection-errors", "-o", "addopts=", *map(str, files)]
        try:
            reader = _Log(log_path, time.monotonic())
            proc = subprocess.Popen(cmd, cwd=root, env={**env, "PYACLNN_SUITE_LOG": log_path}, stdout=output,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                while proc.poll() is None and time.monotonic() - reader.since < timeout:
                    time.sleep(0.1)
                    reader.poll()
            finally:
                if proc.poll() is None:     # its file's time is up (or the runner itself is interrupted)
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    ended = "timeout"
                else:
                    rc = proc.returncode
                    # pytest's own codes: 0 all passed, 1 some failed (or a file did not import), 2 interrupted,
                    # 3 internal error, 4 usage, 5 none collected
                    ended = "ok" if rc in (0, 1, 5) else (f"crash signal {-rc}" if rc < 0 else f"crash rc {rc}")
            reader.poll()
        finally:
            os.unlink(log_path)
        output.seek(0)
        tail = output.read()[-2000:]
    return reader.records, ended, tail, reader.current


def run_files(files: list[Path], root: Path, env: dict, *, timeout: float = 300.0, chunk: int = 8,
              jobs: int = 1, progress=None, faults: dict[str, dict] | None = None) -> list[FileResult]:
    """Every file's result (the failures `faults` lists count as upstream: pyaclnn.suite.upstream). Chunks of `chunk` files run in `jobs` parallel processes, a file at most `timeout`
    seconds; when a chunk's process crashes, the file it was running is run again alone and the files after it
    anew; a file that runs out of time is recorded as a timeout and the chunk goes on with the files after it; the
    files that failed after one that poisoned the chunk's process (POISONED) run again alone."""
    chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]

    def by_file(records: list[dict]) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for rec in records:
            out.setdefault(Path(rec["file"]).name, []).append(rec)
        return out

    def settle(part: list[Path], grouped: dict, ended: str, tail: str) -> list[FileResult]:
        """The results of files that ran in one process, `ended` as it ended; after a file that poisoned the
        process, the later files that failed run again alone."""
        results = [_tally(f.name, grouped.get(f.name, []), ended, faults or {}) for f in part]
        for r in results:
            if r.ended != "ok" and not r.first_failure:
                r.first_failure = tail.strip().splitlines()[-1][:300] if tail.strip() else ""
        poisoned = next((i for i, f in enumerate(part)
                         if any(POISONED in rec["text"] for rec in grouped.get(f.name, []))), len(part))
        for i in range(len(part)):
            if i > poisoned and not results[i].green:
                results[i] = one_chunk([part[i]])[0]
            elif progress:
                progress(results[i])
        return results

    def one_chunk(part: list[Path]) -> list[FileResult]:
        records, ended, tail, running = _run_chunk(part, root, env, timeout)
        grouped = by_file(records)
        if ended == "ok" or len(part) == 1:
            return settle(part, grouped, ended, tail)
        if running is None:          # ended before its first test (collection): each file alone
            return [r for f in part for r in one_chunk([f])]
        # the files before the one that was running finished; that one ran out of its own time (a timeout) or
        # runs again alone (did it crash by itself?); the files after it run anew
        k = next(i for i, f in enumerate(part) if f.name == running)
        done = settle(part[:k], grouped, "ok", tail)
        stopped = settle(part[k:k + 1], grouped, ended, tail) if ended == "timeout" else one_chunk(part[k:k + 1])
        return done + stopped + (one_chunk(part[k + 1:]) if k + 1 < len(part) else [])

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return [r for part in pool.map(one_chunk, chunks) for r in part]
