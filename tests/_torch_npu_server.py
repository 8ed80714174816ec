"""One torch_npu process per emulated SoC for the whole test session, running the test files' snippets.

Importing torch and torch_npu on the emulator takes about 4 s; ~25 test files each check that their torch
calls reach their operators, so a child per file cost about 100 s of every run. The server is started on
first use under ``python -m pyaclnn exec`` and runs each snippet in a fresh namespace. A snippet that raises
ends its server (the next snippet gets a new process: a failure cannot leave state behind for another
file's snippet); one that kills its process is reported with the end of the process's stderr.

Between snippets the server is stopped (SIGSTOP, SIGCONT before the next one): an idle torch_npu process with its
default task queue spins in its queue threads (about a quarter of a core, measured), and the session's two
servers sit idle for most of the suite's run, beside the other tests on the same cores.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap

import helpers

# The child: its stdout (fd 1) becomes stderr so that stray prints, torch's and the emulator's included,
# cannot corrupt the protocol, which uses a duplicate of the original stdout. One JSON line per request
# on stdin ({"code", "spec"}), one per reply ({"out"} or {"error"}).
_SERVER = textwrap.dedent(r"""
    import gc, json, os, sys, traceback
    import torch, torch_npu  # noqa: F401
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        req = json.loads(line)
        ns = {"__name__": "__snippet__", "SPEC": req["spec"], "OUT": {}}
        try:
            exec(compile(req["code"], "<torch_npu snippet>", "exec"), ns)
            torch.npu.synchronize()
            msg = {"out": ns["OUT"]}
        except BaseException:
            msg = {"error": traceback.format_exc()}
        reply.write(json.dumps(msg) + "\n")
        reply.flush()
        if "error" in msg:
            break
        del ns
        gc.collect()
""")

_servers: dict[str, "_Server"] = {}
_PAUSE, _RESUME = getattr(signal, "SIGSTOP", None), getattr(signal, "SIGCONT", None)


class _Server:
    def __init__(self, soc: str):
        self.log = tempfile.TemporaryFile("w+b")
        env = helpers.subprocess_env({"PYACLNN_STUB_SOC": soc, "TORCH_NPU_WARNING_DISABLE": "1"})
        self.proc = subprocess.Popen([sys.executable, "-m", "pyaclnn", "exec", "--", sys.executable, "-c", _SERVER],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _signal(self, sig) -> None:
        if sig is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:      # ended between the poll and the signal
                pass

    def _log_size(self) -> int:
        return os.fstat(self.log.fileno()).st_size

    def stderr_since(self, offset: int) -> str:
        # pread: the child writes at the file offset it shares with us, which must not move
        data = os.pread(self.log.fileno(), max(0, self._log_size() - offset), offset)
        return data.decode("utf-8", "replace")[-4000:]

    def call(self, code: str, spec, timeout: float) -> dict:
        offset = self._log_size()
        self._signal(_RESUME)
        self.proc.stdin.write((json.dumps({"code": code, "spec": spec}) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            self.close(kill=True)
            why = "timed out" if not ready else f"died (status {self.proc.returncode})"
            raise AssertionError(f"torch_npu child {why}:\n{self.stderr_since(offset)}")
        reply = json.loads(line)
        if "error" in reply:
            self.close()
            raise AssertionError(f"torch_npu child failed:\n{reply['error']}\n{self.stderr_since(offset)}")
        self._signal(_PAUSE)
        return reply["out"]

    def close(self, kill: bool = False) -> None:
        self._signal(_RESUME)
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run(code: str, spec, soc: str, timeout: float = 600) -> dict:
    """OUT of `code` run in the session's torch_npu process for `soc` (started if needed)."""
    server = _servers.get(soc)
    if server is None or not server.alive():
        server = _servers[soc] = _Server(soc)
    return server.call(code, spec, timeout)


@atexit.register
def _close_all() -> None:
    for server in _servers.values():
        server.close()
