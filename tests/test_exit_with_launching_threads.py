"""Interpreter exit while daemon threads are still launching operators.

On today's main the exit's finalizers released tensors those threads were using, and the threads died
with ACLNN_ERR_PARAM_INVALID and the hint "rejected an argument (dtype, shape, format or value)". Now
the exit first stops new launches (pyaclnn/_shutdown.py: they raise ShuttingDownError, saying why),
waits for the launches in progress, then releases; and a 161002 about an object that no longer exists
gets a hint saying so instead of the argument hint.
"""
from __future__ import annotations

import ctypes
import re

from helpers import run_python

from pyaclnn import capi
from pyaclnn.ops._errors import op_error

SCRIPT = """
import threading, time
import numpy as np
import pyaclnn
from pyaclnn.ops import amp_update_scale

def loop():
    scale = pyaclnn.from_numpy(np.array([1.0], np.float32))
    tracker = pyaclnn.from_numpy(np.array([0], np.int32))
    found = pyaclnn.from_numpy(np.array([0.0], np.float32))
    while True:
        amp_update_scale(scale, tracker, found, inplace=True)

for _ in range(4):
    threading.Thread(target=loop, daemon=True).start()
time.sleep(0.5)
"""


def test_exit_stops_launches_before_releasing_what_they_use():
    for _ in range(3):
        rc, out, err = run_python(SCRIPT, timeout=60)
        assert rc == 0, err
        assert "rejected an argument" not in err, err
        assert "is not a live" not in err, err
        # Every error the threads died with is the refusal (by name: the threads' tracebacks may
        # interleave on stderr, so one line can hold the start of two reports).
        raised = re.findall(r"(\w+(?:Error|Exception|Interrupt)):", err)
        assert set(raised) <= {"ShuttingDownError"}, err
        if raised:
            assert "interpreter is exiting" in err, err


def test_a_destroyed_argument_gets_its_own_hint(acl):
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    status = capi.aclnnAmpUpdateScaleGetWorkspaceSize(0xDEAD0, 0xDEAD0, 0xDEAD0, 2.0, 0.5, 10, 0xDEAD0, 0xDEAD0,
                                                      ctypes.byref(ws), ctypes.byref(ex))
    assert status == capi.ACLNN_ERR_PARAM_INVALID
    text = str(op_error(status, "aclnnAmpUpdateScaleGetWorkspaceSize", "aclnnAmpUpdateScale"))
    assert "no longer exists" in text and "rejected an argument" not in text, text
