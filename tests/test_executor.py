"""Executors (abi.md §5.4): single use by default, repeatable on request, re-pointing setters with
their index spaces, phase-2 argument rules, and launch snapshots (tensors may be destroyed and
executors re-pointed while launches are still queued). AmpUpdateScale is the vehicle: its inputs
are (currentScale, growthTracker, foundInf), its outputs (updatedScale, updatedGrowthTracker)."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from helpers import DeviceArray, StubCounts as Counts, create_tensor

from pyaclnn import capi
from pyaclnn._loader import backend

NULLPTR = capi.ACLNN_ERR_PARAM_NULLPTR       # 161001
INVALID = capi.ACLNN_ERR_PARAM_INVALID       # 161002
INNER = capi.ACLNN_ERR_INNER                 # 561000
INNER_NULLPTR = capi.ACLNN_ERR_INNER_NULLPTR  # 561103


def live_executors() -> int:
    fn = backend().symbol("pyaclnn_stub_nnopbase_counts")
    fn.argtypes, fn.restype = [ctypes.POINTER(Counts)], None
    out = Counts()
    fn(ctypes.byref(out))
    return out.executors


class AmpCall:
    """Device buffers and aclTensors for one AmpUpdateScale call (fp32 scale)."""

    def __init__(self, scale=100.0, tracker=2, found_inf=0.0):
        self.buffers = [DeviceArray(np.array([scale], np.float32)), DeviceArray(np.array([tracker], np.int32)),
                        DeviceArray(np.array([found_inf], np.float32)), DeviceArray(np.zeros(1, np.float32)),
                        DeviceArray(np.zeros(1, np.int32))]
        dtypes = [capi.ACL_FLOAT, capi.ACL_INT32, capi.ACL_FLOAT, capi.ACL_FLOAT, capi.ACL_INT32]
        self.tensors = [create_tensor([1], dt, b.ptr) for dt, b in zip(dtypes, self.buffers)]

    def phase1(self, growth_interval=5):
        ws, executor = ctypes.c_uint64(123), ctypes.c_void_p()
        status = capi.aclnnAmpUpdateScaleGetWorkspaceSize(*self.tensors[:3], 2.0, 0.5, growth_interval,
                                                          *self.tensors[3:], ctypes.byref(ws), ctypes.byref(executor))
        assert status == 0
        assert ws.value == 0
        return executor.value

    def destroy_tensors(self):
        for t in self.tensors:
            if t:
                assert capi.aclDestroyTensor(t) == 0
        self.tensors = [None] * 5

    def results(self):
        return float(self.buffers[3].numpy()[0]), int(self.buffers[4].numpy()[0])

    def close(self):
        self.destroy_tensors()
        for b in self.buffers:
            b.free()


@pytest.fixture
def call(acl):
    c = AmpCall()
    yield c
    c.close()


def run(executor, stream, workspace=None, workspace_size=0):
    return capi.aclnnAmpUpdateScale(workspace, workspace_size, executor, stream)


# ------------------------------------------------------------------------------------------------
# Single use
# ------------------------------------------------------------------------------------------------

def test_single_use_executor_is_consumed_by_its_run(call, stream, recent_error):
    before = live_executors()
    executor = call.phase1()
    assert live_executors() == before + 1
    assert run(executor, stream) == 0
    assert live_executors() == before
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert call.results() == (100.0, 3)

    assert run(executor, stream) == INVALID          # second run: refused, no crash
    assert "aclSetAclOpExecutorRepeatable" in recent_error()
    assert capi.aclDestroyAclOpExecutor(executor) == INNER   # mindnlp does this at exit
    assert recent_error()


def test_destroying_an_unused_executor_frees_it(call, recent_error):
    before = live_executors()
    executor = call.phase1()
    assert capi.aclDestroyAclOpExecutor(executor) == 0
    assert live_executors() == before
    assert capi.aclDestroyAclOpExecutor(executor) == INNER
    assert recent_error()
    assert capi.aclSetAclOpExecutorRepeatable(executor) == INNER
    assert recent_error()


def test_null_executor(acl, stream, recent_error):
    assert capi.aclDestroyAclOpExecutor(None) == INNER_NULLPTR
    assert capi.aclSetAclOpExecutorRepeatable(None) == INNER_NULLPTR
    assert run(None, stream) == NULLPTR
    assert recent_error()


def test_workspace_size_without_workspace_is_refused_and_consumes(call, stream, recent_error):
    executor = call.phase1()
    assert run(executor, stream, workspace=None, workspace_size=64) == NULLPTR
    assert "workspace" in recent_error()
    assert run(executor, stream) == INVALID          # consumed even though the run failed


def test_a_larger_workspace_than_needed_is_fine(call, stream):
    workspace = DeviceArray(np.zeros(64, np.uint8))
    try:
        assert run(call.phase1(), stream, workspace.ptr, 64) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
    finally:
        workspace.free()
    assert call.results() == (100.0, 3)


def test_tensors_destroyed_right_after_phase_2_while_queued(acl, stream):
    # torch_npu's pattern: create, phase 1, phase 2, destroy at once; the work may still be queued.
    calls = [AmpCall(scale=2.0 ** k, tracker=4, found_inf=0.0) for k in range(20)]
    try:
        for c in calls:
            assert run(c.phase1(), stream) == 0
            c.destroy_tensors()
        assert capi.aclrtSynchronizeStream(stream) == 0
        assert [c.results() for c in calls] == [(2.0 ** (k + 1), 0) for k in range(20)]
    finally:
        for c in calls:
            c.close()


# ------------------------------------------------------------------------------------------------
# Repeatable executors and the address setters
# ------------------------------------------------------------------------------------------------

def test_repeatable_executor_reruns_with_repointed_addresses(call, stream):
    before = live_executors()
    executor = call.phase1()
    assert capi.aclSetAclOpExecutorRepeatable(executor) == 0
    assert run(executor, stream) == 0
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert call.results() == (100.0, 3)

    # new inputs through the input index space, new outputs through the output index space
    other = AmpCall(scale=8.0, tracker=4, found_inf=0.0)
    try:
        for i in range(3):
            assert capi.aclSetInputTensorAddr(executor, i, call.tensors[i], other.buffers[i].ptr) == 0
        for i in range(2):
            assert capi.aclSetOutputTensorAddr(executor, i, call.tensors[3 + i], other.buffers[3 + i].ptr) == 0
        assert run(executor, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        assert other.results() == (16.0, 0)
        assert call.results() == (100.0, 3)              # the first outputs were not touched again
        # the setters also wrote the address into the aclTensor itself
        addr = ctypes.c_void_p()
        assert capi.aclGetRawTensorAddr(call.tensors[3], ctypes.byref(addr)) == 0
        assert addr.value == other.buffers[3].ptr

        # aclSetTensorAddr: one index space, inputs then outputs (3 = updatedScale)
        assert capi.aclSetTensorAddr(executor, 3, call.tensors[3], call.buffers[3].ptr) == 0
        assert capi.aclSetTensorAddr(executor, 4, call.tensors[4], call.buffers[4].ptr) == 0
        assert run(executor, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        assert call.results() == (16.0, 0)
    finally:
        other.close()
    assert live_executors() == before + 1                # runs do not consume it
    assert capi.aclDestroyAclOpExecutor(executor) == 0
    assert live_executors() == before


def test_repeatable_relaunches_before_earlier_launches_ran(acl, stream):
    # Each launch snapshots the addresses at phase-2 time, so re-pointing right after a launch
    # must not redirect the launch that is still queued.
    source = AmpCall(scale=1.0, tracker=4, found_inf=0.0)
    outs = [(DeviceArray(np.zeros(1, np.float32)), DeviceArray(np.zeros(1, np.int32))) for _ in range(30)]
    scales = [DeviceArray(np.array([2.0 ** k], np.float32)) for k in range(30)]
    executor = source.phase1()
    try:
        assert capi.aclSetAclOpExecutorRepeatable(executor) == 0
        for k in range(30):
            assert capi.aclSetInputTensorAddr(executor, 0, source.tensors[0], scales[k].ptr) == 0
            assert capi.aclSetOutputTensorAddr(executor, 0, source.tensors[3], outs[k][0].ptr) == 0
            assert capi.aclSetOutputTensorAddr(executor, 1, source.tensors[4], outs[k][1].ptr) == 0
            assert run(executor, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0
        got = [(float(s.numpy()[0]), int(t.numpy()[0])) for s, t in outs]
        assert got == [(2.0 ** (k + 1), 0) for k in range(30)]
    finally:
        capi.aclDestroyAclOpExecutor(executor)
        source.close()
        for s, t in outs:
            s.free()
            t.free()
        for s in scales:
            s.free()


def test_destroying_a_repeatable_executor_with_launches_queued(call, stream):
    executor = call.phase1()
    assert capi.aclSetAclOpExecutorRepeatable(executor) == 0
    assert run(executor, stream) == 0
    assert capi.aclDestroyAclOpExecutor(executor) == 0   # the queued launch owns its own copy
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert call.results() == (100.0, 3)


@pytest.mark.parametrize("setter,index", [("aclSetInputTensorAddr", 3), ("aclSetOutputTensorAddr", 2),
                                          ("aclSetTensorAddr", 5), ("AclSetInputTensorAddr", 3),
                                          ("AclSetOutputTensorAddr", 2), ("AclSetTensorAddr", 5)])
def test_setter_index_out_of_range(call, recent_error, setter, index):
    executor = call.phase1()
    fn = getattr(capi, setter)
    addr = ctypes.c_void_p()
    capi.aclGetRawTensorAddr(call.tensors[0], ctypes.byref(addr))
    assert fn(executor, index, call.tensors[0], 0x5000) == INVALID
    assert "out of range" in recent_error()
    assert fn(executor, index - 1, call.tensors[0], addr.value) == 0      # last valid index
    after = ctypes.c_void_p()
    capi.aclGetRawTensorAddr(call.tensors[0], ctypes.byref(after))
    assert after.value == addr.value                    # the refused call wrote nothing
    assert capi.aclDestroyAclOpExecutor(executor) == 0


@pytest.mark.parametrize("setter", ["aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr"])
def test_setter_null_and_stale_arguments(call, stream, recent_error, setter):
    fn = getattr(capi, setter)
    executor = call.phase1()
    assert fn(None, 0, call.tensors[0], 0x5000) == INNER_NULLPTR
    assert fn(executor, 0, None, 0x5000) == INNER_NULLPTR
    assert recent_error()
    stale = create_tensor([1], capi.ACL_FLOAT, 0)
    capi.aclDestroyTensor(stale)
    assert fn(executor, 0, stale, 0x5000) == INVALID
    assert recent_error()
    assert run(executor, stream) == 0                   # consumed
    assert fn(executor, 0, call.tensors[0], 0x5000) == INVALID
    assert recent_error()


@pytest.mark.parametrize("setter", ["aclSetDynamicInputTensorAddr", "aclSetDynamicOutputTensorAddr",
                                    "aclSetDynamicTensorAddr", "AclSetDynamicInputTensorAddr",
                                    "AclSetDynamicOutputTensorAddr", "AclSetDynamicTensorAddr"])
def test_dynamic_setters(call, recent_error, setter):
    fn = getattr(capi, setter)
    executor = call.phase1()
    element = create_tensor([1], capi.ACL_FLOAT, 0)
    tensor_list = capi.aclCreateTensorList((ctypes.c_void_p * 1)(element), 1)
    try:
        assert fn(executor, 0, 0, None, 0x5000) == INNER_NULLPTR
        assert fn(executor, 0, 1, tensor_list, 0x5000) == INVALID       # relativeIndex past the list
        assert fn(None, 0, 0, tensor_list, 0x5000) == INNER_NULLPTR
        assert fn(executor, 0, 0, tensor_list, 0x5000) == INVALID       # AmpUpdateScale has no list parameter
        assert "irIndex" in recent_error()
    finally:
        capi.aclDestroyTensorList(tensor_list)
        capi.aclDestroyAclOpExecutor(executor)
