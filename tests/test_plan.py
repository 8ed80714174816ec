"""Explicit plans (pyaclnn/ops/_plan.py): ops.plan owns descriptors, workspace and outputs; every
execute returns new outputs, never overwritten while the caller holds them. ops.prepare makes the same
kind of object, run on the caller's tensors. Values against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops, runtime
from pyaclnn.errors import ArgumentTypeError, ClosedError, InvalidArgumentError, PyaclnnError, UnsupportedError


def _dev(a):
    return pyaclnn.from_numpy(np.asarray(a, np.float32))


def _adds_plan(x, alpha=2.0, stream=None):
    return ops.plan("Adds", x, alpha, 1, pyaclnn.empty(x.shape, "float32", stream=stream), stream=stream)


def test_execute_returns_new_outputs_each_time_and_held_ones_keep_their_values(acl):
    rng = np.random.default_rng(0)
    hosts = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(4)]
    xs = [_dev(h) for h in hosts]
    with _adds_plan(xs[0]) as plan:
        assert plan.input_names == ("self",) and isinstance(plan, ops.Plan)
        held = [plan.execute(x) for x in xs]            # all held: four sets, four blocks
        assert len({r[0]._ptr for r in held}) == 4
        for h, (out,) in zip(hosts, held):
            np.testing.assert_array_equal(out.numpy(), h + 2.0)


def test_a_dropped_or_closed_set_s_block_goes_to_the_next_execute(acl):
    x = _dev(np.arange(32).reshape(4, 8))
    pool = runtime.current_stream().pool
    with _adds_plan(x) as plan:
        (a,) = plan.execute(x)
        base = a._ptr
        del a
        (b,) = plan.execute(x)
        assert b._ptr == base                            # dropped: the plan's next execute took it
        view = b[1:]
        b.close()
        (c,) = plan.execute(x)
        assert c._ptr != base                            # a view still holds the closed output's block
        in_use = pool.stats()["in_use_blocks"]
        del view
        (d,) = plan.execute(x)
        assert d._ptr == base and pool.stats()["in_use_blocks"] == in_use
        np.testing.assert_array_equal(d.numpy(), np.arange(32).reshape(4, 8) + 2.0)
        del c, d
    assert pool.stats()["in_use_blocks"] == in_use - 2   # closing the plan gave its kept blocks back


def test_outputs_outlive_their_plan(acl):
    x = _dev(np.ones((2, 3)))
    plan = _adds_plan(x, alpha=3.0)
    (out,) = plan.execute(x)
    plan.close()
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 4.0, np.float32))
    assert plan.closed


def test_clear_errors(acl):
    x = _dev(np.ones((2, 3)))
    plan = _adds_plan(x)
    with pytest.raises(ArgumentTypeError, match="pyaclnn tensors"):
        plan.execute(np.ones((2, 3), np.float32))
    with pytest.raises(InvalidArgumentError, match="layout differs"):
        plan.execute(_dev(np.ones((3, 3))))
    with pytest.raises(ArgumentTypeError, match="expected the 1 input tensors"):
        plan.execute(x, x)
    with pytest.raises(ArgumentTypeError, match="pyaclnn tensors"):
        ops.plan("Adds", x, 2.0, 1, np.zeros((2, 3), np.float32))
    plan.close()
    with pytest.raises(ClosedError, match="plan is closed"):
        plan.execute(x)
    assert issubclass(ArgumentTypeError, PyaclnnError)


def test_prepare_and_plan_make_one_kind_of_plan_each_refusing_the_other_s_way_of_running(acl):
    x = _dev(np.arange(6).reshape(2, 3))
    out = pyaclnn.empty((2, 3), "float32")
    owning, on_yours = _adds_plan(x), ops.prepare("Adds", x, 2.0, 1, out)
    assert ops.PreparedCall is ops.Plan
    assert isinstance(owning, ops.Plan) and isinstance(on_yours, ops.Plan) and type(owning) is type(on_yours)
    assert owning.owns_outputs and not on_yours.owns_outputs
    assert owning.specs == (((2, 3), pyaclnn.capi.ACL_FLOAT, pyaclnn.capi.ACL_FORMAT_ND),) and on_yours.specs is None
    assert owning.input_names == ("self",) and on_yours.tensor_names == ("self", "out")
    assert "1 inputs, 1 outputs" in repr(owning) and "2 tensor slots" in repr(on_yours)
    (first,) = owning.execute(x)
    # An owning plan keeps no tensors between executions: a call "on the current ones" would write
    # into the block `first` owns. Refused before anything is launched, on every form of the call.
    for call in (lambda: owning(), lambda: owning(x, first), lambda: owning(stream=runtime.current_stream()),
                 lambda: owning(self=x)):
        with pytest.raises(UnsupportedError, match=r"owns its outputs \(ops.plan\): plan.execute"):
            call()
    with pytest.raises(UnsupportedError, match=r"runs on the tensors it was prepared with \(ops.prepare\)"):
        on_yours.execute(x)
    on_yours(self=_dev(np.ones((2, 3))))        # (a tensor parameter named like Python's self)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 3.0, np.float32))
    on_yours(x, out)
    np.testing.assert_array_equal(first.numpy(), np.arange(6).reshape(2, 3) + 2.0)
    np.testing.assert_array_equal(out.numpy(), np.arange(6).reshape(2, 3) + 2.0)
    assert issubclass(UnsupportedError, PyaclnnError)
    owning.close()
    on_yours.close()


def test_a_plan_on_a_closed_stream_raises(acl):
    s = runtime.Stream()
    x = pyaclnn.from_numpy(np.ones((2, 3), np.float32), stream=s)
    plan = _adds_plan(x, stream=s)
    (out,) = plan.execute(x)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 3.0, np.float32))
    s.close()
    with pytest.raises(ClosedError):
        plan.execute(x)
    plan.close()


def test_inputs_from_another_stream_are_ordered_on_the_plan_s(acl):
    s = runtime.Stream()
    try:
        x = pyaclnn.from_numpy(np.arange(6, dtype=np.float32), stream=s)
        s.synchronize()
        with _adds_plan(pyaclnn.empty((6,), "float32")) as plan:
            (out,) = plan.execute(x)                     # noted on the plan's stream, then launched
            np.testing.assert_array_equal(out.numpy(), np.arange(6, dtype=np.float32) + 2.0)
    finally:
        s.close()
