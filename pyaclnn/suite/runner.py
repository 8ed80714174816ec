"""Runs test files on the emulator in chunks of child processes: each chunk is one pytest process with the
emulated toolkit's environment (the files share one torch_npu import), a crashing or hanging chunk is
re-run a file at a time, and every file gets a :class:`FileResult`."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
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
    ended ("ok", "crash <signal or rc>", "timeout")."""
    file: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    missing: str | None = None
    ended: str = "ok"
    first_failure: str = ""
    tests: dict = field(default_factory=dict)

    @property
    def green(self) -> bool:
        """All green: it ran to the end, something passed, and nothing failed."""
        return self.ended == "ok" and self.passed > 0 and not self.failed and not self.errors

    def as_dict(self) -> dict:
        return {"file": self.file, "passed": self.passed, "failed": self.failed, "errors": self.errors,
                "skipped": self.skipped, "missing": self.missing, "ended": self.ended, "green": self.green,
                "first_failure": self.first_failure}


def _tally(name: str, records: list[dict], ended: str) -> FileResult:
    r = FileResult(name, ended=ended)
    for rec in records:
        outcome = rec["outcome"]
        if outcome == "passed":
            r.passed += 1
        elif outcome == "skipped":
            r.skipped += 1
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


def _run_chunk(files: list[Path], root: Path, env: dict, timeout: float) -> tuple[list[dict], str, str]:
    """One pytest process over `files`: the plugin's records, how it ended, and its output's tail."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as log:
        log_path = log.name
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "pyaclnn.suite.plugin", "-p", "no:cacheprovider",
           "--continue-on-collection-errors", "-o", "addopts=", *map(str, files)]
    proc = subprocess.Popen(cmd, cwd=root, env={**env, "PYACLNN_SUITE_LOG": log_path}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
        # pytest's own codes: 0 all passed, 1 some failed (or a file did not import), 2 interrupted, 3 internal
        # error, 4 usage, 5 none collected
        ended = "ok" if rc in (0, 1, 5) else (f"crash signal {-rc}" if rc < 0 else f"crash rc {rc}")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        ended = "timeout"
    try:
        with open(log_path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    finally:
        os.unlink(log_path)
    return records, ended, (out or "")[-2000:]


def run_files(files: list[Path], root: Path, env: dict, *, timeout: float = 300.0, chunk: int = 8,
              jobs: int = 1, progress=None) -> list[FileResult]:
    """Every file's result. Chunks of `chunk` files run in `jobs` parallel processes with `timeout` seconds a
    file; a chunk that crashes or times out is run again a file at a time (each with the same timeout), and so
    are the files that failed after one that poisoned the chunk's process (POISONED)."""
    chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]

    def by_file(records: list[dict]) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for rec in records:
            out.setdefault(Path(rec["file"]).name, []).append(rec)
        return out

    def one_chunk(part: list[Path]) -> list[FileResult]:
        records, ended, tail = _run_chunk(part, root, env, timeout * len(part))
        if ended != "ok" and len(part) > 1:     # each file alone (those calls report their own progress)
            return [r for f in part for r in one_chunk([f])]
        grouped = by_file(records)
        results = [_tally(f.name, grouped.get(f.name, []), ended) for f in part]
        for r in results:
            if r.ended != "ok" and not r.first_failure:
                r.first_failure = tail.strip().splitlines()[-1][:300] if tail.strip() else ""
        # after a file that poisoned the process, the chunk's later files that failed run again alone
        poisoned = next((i for i, f in enumerate(part)
                         if any(POISONED in rec["text"] for rec in grouped.get(f.name, []))), len(part))
        for i in range(len(part)):
            if i > poisoned and not results[i].green:
                results[i] = one_chunk([part[i]])[0]
            elif progress:
                progress(results[i])
        return results

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return [r for part in pool.map(one_chunk, chunks) for r in part]
