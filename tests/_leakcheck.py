"""Leak accounting for the test suite: every module must release what it creates on the stub.

Two autouse fixtures, enabled by importing them in conftest.py:

* ``no_leaks_per_module`` -- the stub's live-object counts (device allocations, streams, events,
  contexts, tensors, scalars, arrays, lists, executors) after a test module equal those before it;
* ``no_leaks_at_exit`` -- at the end of the session, after the session fixtures released the
  runtime, every count is zero (apart from what the Pythonic layer keeps for the process, below).

The counts come from :func:`pyaclnn._stubinfo.live_counts`. Nothing is measured (and the libraries
are not loaded just for this) while this process has not loaded the stub: before loading, nothing
can be alive. Tests that must leave something alive on purpose do it in a subprocess.

The Pythonic layer keeps some things on purpose: a default stream per device used so far (for the
life of the process) and, for speed, freed device blocks in that stream's memory pool and the friendly
functions' cached plans. Before counting, the caches are emptied (what ``pyaclnn.empty_cache`` does)
and the default streams are not counted as leaks.
"""
from __future__ import annotations

import gc
import sys

import pytest

from pyaclnn import _loader
from pyaclnn._stubinfo import FIELDS, leaked, live_counts

_NOTHING = {name: 0 for name in FIELDS}


def _kept_on_purpose() -> dict[str, int]:
    """Empties the Pythonic layer's caches; returns what it still keeps for the process."""
    kept = dict(_NOTHING)
    plans = sys.modules.get("pyaclnn.ops._friendly_plans")
    if plans is not None:
        plans.clear()
    runtime = sys.modules.get("pyaclnn.runtime")
    for state in runtime.iter_states() if runtime is not None and hasattr(runtime, "iter_states") else ():
        stream = getattr(state, "default_stream", None)
        if stream is not None:
            stream.pool.empty_cache()
            kept["streams"] += 1
    return kept


def _counts() -> dict[str, int]:
    """Live stub objects that somebody still has to release."""
    if not _loader.is_loaded():
        return dict(_NOTHING)
    gc.collect()                              # Python owners release their C objects when collected
    kept = _kept_on_purpose()
    counts = live_counts()
    if counts is None:                        # a real toolkit: nothing to count
        return dict(_NOTHING)
    return {name: counts[name] - kept[name] for name in FIELDS}


@pytest.fixture(scope="module", autouse=True)
def no_leaks_per_module(request):
    before = _counts()
    yield
    left = leaked(before, _counts())
    if left:
        pytest.fail(f"{request.module.__name__} left stub objects alive (count changes {left}); release "
                    f"them in the tests or their fixtures", pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def no_leaks_at_exit():
    yield
    left = leaked(_NOTHING, _counts())
    if left:
        pytest.fail(f"stub objects still alive at the end of the test session: {left}", pytrace=False)
