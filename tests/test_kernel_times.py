"""PYACLNN_STUB_KERNEL_TIMES: the emulator's per-operator kernel counts, times and elements, appended to a file
as JSON lines when the process exits (what benchmarks/torch_npu_models.py --kernel-times reads). The figures
themselves are not checked (no timed tests): the counts, the elements and the shape of each line are."""
from __future__ import annotations

import json

from helpers import run_python

CHILD = """
import numpy as np
import pyaclnn
from pyaclnn import ops

a = pyaclnn.from_numpy(np.arange(10, dtype=np.float32))
o = pyaclnn.from_numpy(np.zeros(10, np.float32))
m = pyaclnn.from_numpy(np.zeros((3, 4), np.float32))
for _ in range(3):
    ops.Add(a, a, ops.Scalar(1, "int64"), o)
ops.InplaceOne(m)
try:
    ops.Add(a, m, ops.Scalar(1, "int64"), o)      # refused in phase 1: nothing launched, nothing counted
except Exception:
    pass
pyaclnn.current_stream().synchronize()
print(o.numpy()[3], m.numpy().sum())
"""


def run(tmp_path, value):
    path = tmp_path / "kernels.jsonl"
    code, out, err = run_python(CHILD, {"PYACLNN_STUB_KERNEL_TIMES": value(path) if callable(value) else value},
                                cwd=tmp_path)
    assert code == 0, out + err
    assert out.split() == ["6.0", "12.0"], out
    return path


def test_counts_calls_and_elements_per_operator(tmp_path):
    path = run(tmp_path, str)
    rows = {r["op"]: r for r in map(json.loads, path.read_text().splitlines())}
    assert set(rows) == {"Add", "InplaceOne"}, rows
    assert (rows["Add"]["calls"], rows["Add"]["elements"]) == (3, 30)
    assert (rows["InplaceOne"]["calls"], rows["InplaceOne"]["elements"]) == (1, 12)
    for r in rows.values():
        assert set(r) == {"pid", "op", "calls", "ns", "cpu_ns", "elements"}
        assert r["ns"] >= 0 and r["cpu_ns"] >= 0
    run(tmp_path, str)                                 # a second process appends its own lines
    lines = [json.loads(ln) for ln in path.read_text().splitlines()]
    assert len(lines) == 4 and len({r["pid"] for r in lines}) == 2


def test_unset_or_zero_writes_nothing(tmp_path):
    path = run(tmp_path, "0")
    assert not path.exists() and list(tmp_path.iterdir()) == []   # nor a file named 0 in the cwd
