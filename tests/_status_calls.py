"""Phase-1 calls described as data, and their status codes on a SoC: the SoC of this process in process,
another in one child process (the vendor's dtype lists differ per SoC, and a process has one SoC). Shared by
the operator tests' helpers (_math_ops, _pointwise_calls, _shape_helpers, _cnn_ops).

A call is (operator, [argument ...]); an argument is
  ("t", dtype, shape[, fill])  a tensor of `fill` (1 by default; a list gives the values in order),
  ("s", value, dtype)          an aclScalar,
  ("v", value)                 the value as is (a double, a bool),
  ("n",)                       NULL,
or any other value, passed as is (ints, floats, bools, lists of ints). An operator name "=Op" gives the
result's bytes instead of 0.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile

import helpers

# Run in process (exec'd once) and at the top of the child: what turns an argument into a value.
CALL_SOURCE = '''
import json, sys
import numpy as np
import ml_dtypes
import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R


def arg(a):
    if not (isinstance(a, (list, tuple)) and a and isinstance(a[0], str)):
        return a
    kind = a[0]
    if kind == "t":
        if a[1] == "hifloat8":                  # no NumPy dtype: its bytes (0x38 = 1.0)
            return pyaclnn.from_numpy(np.full(a[2], 0x38, np.uint8), dtype="hifloat8")
        dt = ml_dtypes.float8_e4m3fn if a[1] == "float8_e4m3fn" else R.np_dtype(a[1])
        fill = a[3] if len(a) > 3 else 1
        if isinstance(fill, list):
            return np.array(fill, np.float64).astype(dt).reshape(a[2])
        return np.full(a[2], fill).astype(dt)
    if kind == "s":
        return ops.Scalar(a[1], a[2])
    if kind == "v":
        return a[1]
    if kind == "n":
        return None
    return a


def run(name, args):
    try:
        r = getattr(ops, name.lstrip("="))(*[arg(a) for a in args])
    except AclError as exc:
        return exc.code
    return np.ascontiguousarray(r).view(np.uint8).tolist() if name.startswith("=") else 0
'''

_CHILD_MAIN = '''
codes = [run(name, args) for name, args in json.loads(sys.stdin.read())]
EXTRA = {}
__EXTRA__
print("RESULT " + json.dumps({"codes": codes, "extra": EXTRA}))
'''

# The calls of another SoC without `extra` run in one child per SoC for the whole session: a child per test
# (pyaclnn, NumPy and the stub loaded each time) cost 1.5-3 s in each of ~30 test files. Stray prints go to
# stderr (a file); the replies use a duplicate of the original stdout, one JSON line per batch of calls.
# An exception other than the operators' AclError ends the child (the test sees its traceback).
_CHILD_LOOP = '''
import os
reply = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
for line in sys.stdin:
    reply.write(json.dumps([run(name, args) for name, args in json.loads(line)]) + "\\n")
    reply.flush()
'''

_children: dict = {}


def _child(soc: str):
    proc = _children.get(soc)
    if proc is None or proc.poll() is not None:
        log = tempfile.TemporaryFile("w+b")
        env = helpers.subprocess_env({"PYACLNN_STUB_SOC": soc, "PYTHONPATH": f"{helpers.REPO_ROOT / 'tests'}"})
        proc = subprocess.Popen([sys.executable, "-c", CALL_SOURCE + _CHILD_LOOP], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, env=env)
        proc.log = log
        _children[soc] = proc
    return proc


def _codes_in_child(calls: list, soc: str) -> list:
    proc = _child(soc)
    proc.stdin.write((json.dumps(calls) + "\n").encode())
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 300)
    line = proc.stdout.readline() if ready else b""
    if not line:
        try:
            proc.wait(timeout=5 if ready else 0)      # ended: its own status; hung: killed
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.log.seek(0)
        why = "timed out" if not ready else f"died (status {proc.returncode})"
        raise AssertionError(f"the {soc} child {why}:\n" + proc.log.read().decode("utf-8", "replace")[-3000:])
    return json.loads(line)


@atexit.register
def _close_children() -> None:
    for proc in _children.values():
        if proc.poll() is None:
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


_here: dict = {}


def _run_here(name: str, args) -> object:
    if not _here:
        exec(CALL_SOURCE, _here)
    return _here["run"](name, args)


def this_soc() -> str:
    return os.environ.get("PYACLNN_STUB_SOC", "Ascend950PR")


def status_codes(calls: list, soc: str, extra: str = ""):
    """The status of each call on `soc` (in process when it is this process's SoC and there is no `extra`).
    `extra` is code run in the child after the calls that fills the dict EXTRA: then (codes, EXTRA)."""
    if soc == this_soc() and not extra:
        return [_run_here(name, args) for name, args in calls]
    if not extra:
        return _codes_in_child(calls, soc)
    env = helpers.subprocess_env({"PYACLNN_STUB_SOC": soc, "PYTHONPATH": f"{helpers.REPO_ROOT / 'tests'}"})
    proc = subprocess.run([sys.executable, "-c", CALL_SOURCE + _CHILD_MAIN.replace("__EXTRA__", extra)],
                          input=json.dumps(calls), env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    return (out["codes"], out["extra"]) if extra else out["codes"]
