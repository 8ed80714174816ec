"""Finalizers that an interrupt cannot cut short.

``weakref.finalize`` runs its callback as Python code on the thread where the object died. A signal
handler that raises (Ctrl-C's KeyboardInterrupt) runs between bytecodes, so it can land at the
callback's entry (the finalizer stays registered with a dead referent) or between its bookkeeping
and the release (the resource is lost).

:func:`finalizer` is a drop-in for ``weakref.finalize`` without that hole. The object's death runs
no Python code at all: the weak reference's callback is ``SimpleQueue.put``, a C function, which
queues the :class:`Finalizer`. A daemon thread, the releaser, takes it from the queue and runs the
release. Python runs signal handlers on the main thread only, so nothing interrupts the releaser.

* ``f()`` (``close()``) still releases at once, on the calling thread, exactly once: the call claims
  the finalizer (no interrupt point between the test and the mark), runs the release, and forgets
  it. A signal can still interrupt *that* release part-way on the main thread; the call then hands
  the finalizer to the releaser (one ``SimpleQueue.put``, the first call of its handler), which
  runs the release again from the start. So every release function must be *resumable*: each step
  takes what it releases out of its container in the same C call (or interrupt-free bytecode run)
  that releases it (:func:`drain`), and steps that find nothing do nothing.
* An object dropped without ``close()`` is released a moment later, not before ``del`` returns.
  :func:`flush` waits until every release queued so far has run; the calls whose result depends on
  them flush first: :func:`pyaclnn.empty_cache`, pool ``stats``, :func:`pyaclnn.runtime.stub_live_counts`,
  an allocation that misses the pool's cache (or fails), ``Device.close`` (so the last explicit
  release resets the device) and host-memory registration.
* At interpreter exit (``atexit``) the releaser is stopped and every finalizer still registered runs
  on the main thread, newest first (``weakref.finalize``'s order: objects before what they use).
* A forked child starts its own releaser on first use.
* :func:`parked_finalizer` is for a release that needs no runtime call and may wait for its owner's
  next use -- a block going back to its stream's memory pool: the death appends the finalizer to the
  owner's list (``list.append``, C code, on whatever thread), and the owner runs what is parked on its
  own thread (:func:`run_parked`: the pool at its next allocation); every :func:`flush` runs every
  owner's list (:func:`on_flush`). No thread is woken, so a dropped result costs no GIL hand-off.

``PYACLNN_RELEASE_THREAD=0`` turns the releaser off: the callback then releases inline on the
dying object's thread, as ``weakref.finalize`` does, and a KeyboardInterrupt landing in it can
leak what it was releasing (for debugging only; see docs/hardening.md).
"""
from __future__ import annotations

import _thread
import atexit
import itertools
import os
import sys
import threading
import weakref
from time import monotonic as _monotonic
from queue import SimpleQueue

__all__ = ["Finalizer", "drain", "finalizer", "flush", "on_flush", "parked_finalizer", "pending", "run_parked"]

_queue: SimpleQueue = SimpleQueue()
_put = _queue.put               # the weakref callback: C code, queues the dead object's Finalizer
# On unless PYACLNN_RELEASE_THREAD=0 (inline releases: not interrupt-safe; see docs/hardening.md).
THREADED = os.environ.get("PYACLNN_RELEASE_THREAD", "1").strip() != "0"
_live: dict = {}                # Finalizer -> (function, args); insertion order = creation order
_claimed: dict = {}             # Finalizer -> its _Claim while an explicit call runs its release
_lock = threading.Lock()        # starting / stopping the releaser
_releaser: threading.Thread | None = None
_busy: list = []                # the finalizer the releaser is running (flush waits for it too)
_shutdown = False               # set at exit: nothing runs any more
_exiting = False                # set when exit begins: the rest runs inline on the exiting thread
_on_releaser = threading.local()  # .yes on the releaser thread (even after exit stopped naming it)


class Finalizer(weakref.ref):
    """A weak reference whose referent's death queues it for release (see the module docstring).

    Calling it releases now (once); ``alive`` is True until it has been called or queued and run.
    """
    __slots__ = ()
    # identity semantics as dict keys (weakref.ref hashes and compares its referent)
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__

    def __call__(self):                     # noqa: D102 -- as weakref.finalize.__call__
        # The claim is a weak reference to an object only this frame holds: if the call is cut short
        # and its handler does not run either (Python 3.10 checks for signals at the entry of an
        # except clause), the frame's end queues the claim (C code), and the releaser resumes the
        # release as long as the claim is still the one registered (see _dispatch).
        owner = _ClaimOwner()
        claim = _Claim(owner, _put)
        claim.finalizer = self
        # The claim: no call (so no interrupt point, and no switch to another thread) between the
        # test and the mark. The releaser skips a claimed finalizer that its referent's death queued.
        if self in _claimed or self not in _live or _shutdown:
            claim = None                    # (dies before its owner: nothing is queued)
            return None
        _claimed[self] = claim
        try:
            info = _live[self]
            result = info[0](*info[1])
        except BaseException:
            # Cut short (a KeyboardInterrupt from a signal handler on the main thread): the releaser
            # runs the (resumable) release again and then forgets the finalizer, now rather than
            # when a kept traceback lets this frame go.
            _put((self,))
            raise
        del _live[self]
        del _claimed[self]
        claim = None
        return result

    @property
    def alive(self) -> bool:
        return self in _live

    def detach(self):
        """Unregister without releasing; returns ``(obj, func, args)`` or None (as weakref.finalize)."""
        obj = weakref.ref.__call__(self)
        info = _live.pop(self, None)
        if info is not None and obj is not None:
            return obj, info[0], info[1]
        return None


class _ClaimOwner:
    """Held only by the frame of an explicit finalizer call: its death ends the call."""
    __slots__ = ("__weakref__",)


class _Claim(weakref.ref):
    """A finalizer's claim by an explicit call: a weak reference to the call's :class:`_ClaimOwner`
    whose callback (``_put``) queues the claim itself when the call's frame goes."""
    __slots__ = ("finalizer",)
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__


def finalizer(obj, func, *args) -> Finalizer:
    """Call ``func(*args)`` when ``obj`` dies (or when the returned Finalizer is called), once.

    Register it *before* taking the resource it releases (or make ``func`` find nothing to release
    until the resource is there), so that an exception at any point leaves nothing unowned.
    """
    f = Finalizer(obj, _callback)   # C-level construction
    _live[f] = (func, args)
    if _releaser is None and THREADED:
        _start()
    return f


def parked_finalizer(obj, park, func, *args) -> Finalizer:
    """:func:`finalizer` whose referent's death parks the Finalizer with its owner instead of queueing
    it for the releaser thread: ``park`` is a C callable taking it (a list's ``append``), so the death
    still runs no Python code, and no thread is woken. The owner of that list runs what is parked with
    :func:`run_parked` when it is next used (a memory pool, at its next allocation), and every
    :func:`flush` runs it too (:func:`on_flush`). For releases that need no runtime call from an
    arbitrary thread and may wait for the owner's next use: a block going back to its stream's pool.
    """
    f = Finalizer(obj, park)        # C-level construction
    _live[f] = (func, args)
    if _releaser is None and THREADED:
        _start()                    # (an explicit release cut short is still handed to it)
    return f


def run_parked(parked: list) -> None:
    """Run the finalizers parked in ``parked`` (:func:`parked_finalizer`), oldest first, on this thread.

    Each leaves the list only after its call returned, so an interrupt before or after a call leaves
    it for the next run (calling it again does nothing once it ran); a release cut short part-way is
    handed to the releaser by the call itself (``Finalizer.__call__``). Another thread running the same
    list finds a finalizer being released claimed: its call returns at once and the finalizer leaves
    the list, the release staying with the call that has it. A release that parks or runs more (a
    nested free) at most recurses once per level, never once per parked item.
    """
    while parked:
        f = parked[0]
        f()
        if parked and parked[0] is f:   # (no call between the test and the removal)
            del parked[0]


_flush_hooks: list = []         # callables running parked releases (on_flush)


def on_flush(run) -> None:
    """Have :func:`flush` call ``run()`` (which runs parked finalizers, see :func:`run_parked`)."""
    _flush_hooks.append(run)


def _run_flush_hooks() -> None:
    for run in _flush_hooks:
        run()


def drain(fn, cell: list) -> int:
    """``fn(item)`` for each item of ``cell`` (last first), each taken out of the cell by the same C
    call chain that releases it, so that an interrupt lands before an item is taken or after it was
    released, never in between; false items (0, None, a NULL ``c_void_p``) are dropped unreleased.
    ``fn`` must be a C function returning a status (a ctypes or capi function). Returns the sum of
    the statuses (non-zero: something failed).
    """
    if not cell:
        return 0
    fn = c_callable(fn)
    return _sum(map(fn, filter(None, map(cell.pop, _repeat(-1, len(cell))))))


def c_callable(fn):
    """``fn``, or for a ``pyaclnn.capi`` function not yet bound (a Python stand-in, which would run
    bytecode -- an interrupt point -- inside the chain) the bound C-level function."""
    if getattr(fn, "_capi_stand_in", False):
        from . import capi
        return capi.c_function(fn.__name__)
    return fn


_sum = sum
_repeat = itertools.repeat


def _run_inline(f: Finalizer) -> None:
    """The callback without the releaser: release on the dying object's thread (as weakref.finalize,
    and as interruptible)."""
    if f in _claimed:
        return                  # an explicit call is running it
    info = _live.pop(f, None)
    if info is not None and not _shutdown:
        try:
            info[0](*info[1])
        except Exception:       # noqa: BLE001 -- finalizers must not raise
            pass


_callback = _put if THREADED else _run_inline


def _start() -> None:
    global _releaser
    with _lock:
        if _releaser is None and not _shutdown:
            t = threading.Thread(target=_run, name="pyaclnn-releaser", daemon=True)
            t.start()
            _releaser = t


_STOP = object()
_LockType = _thread.LockType


def _run() -> None:
    _on_releaser.yes = True
    busy = _busy
    # map(busy.append, iter(get, _STOP)): the item goes from the queue into _busy inside C code, with
    # no bytecode between (so no switch to another thread), so _visible() never misses an item that
    # is on its way from one to the other.
    for _ in map(busy.append, iter(_queue.get, _STOP)):
        item = busy[-1]
        info = None
        try:
            _dispatch(item)
        except BaseException:       # noqa: BLE001 -- a release never takes the releaser down
            pass
        finally:
            # Drop the arguments now, not when the next item comes: they may hold the last
            # reference to another owner (a wrapper's owner tensor), whose release must be queued
            # before this one counts as done.
            item = info = None
            busy.clear()


def _dispatch(item) -> None:
    """Run one queued item (on the releaser, or at exit)."""
    kind = type(item)
    if kind is Finalizer:                   # its referent died
        if item in _claimed:
            return                          # an explicit call runs it: it finishes or hands it over
        info = _live.pop(item, None)
        if info is not None and not _shutdown:
            info[0](*info[1])
    elif kind is tuple:                     # (finalizer,): an explicit call cut short, to resume
        f = item[0]
        info = _live.get(f)
        try:
            if info is not None and not _shutdown:
                info[0](*info[1])
        finally:
            _live.pop(f, None)
            _claimed.pop(f, None)
    elif kind is _Claim:                    # the frame of an explicit call ended
        f = item.finalizer
        if _claimed.get(f) is item:         # still claimed by it: the call was cut short
            _dispatch((f,))
    elif kind is _LockType:                 # a flush() marker: everything before it has run
        item.release()
    else:
        # A job an interrupted call handed over (ops._marshal.CallTemps ...): call sites put it with
        # _put directly, as the first call of their except clause (a helper's entry would be an
        # interrupt point before the put).
        item()


def _visible() -> bool:
    """Releases in the queue or running. The queue first (an item leaves it only into _busy), then _busy,
    then the queue again: a release that ended between the first two looks queues what it dropped
    before it leaves _busy."""
    empty = _queue.empty
    return not empty() or bool(_busy) or not empty()


# From CPython 3.13 on, SimpleQueue.put hands an item straight to a thread blocked in get(): a dead
# object's finalizer is then neither in the queue nor in _busy until the releaser thread runs, so an
# empty queue proves nothing (measured: flush() returned before the release had run, every other
# time). There, while a finalizer is registered, a release may be on its way: pending() says so, and
# flush() waits for its marker. (A release that the releaser's own work queues cannot be handed off --
# the releaser is not waiting then -- so after the marker the queue and _busy tell the truth again.)
_HANDOFF = sys.version_info >= (3, 13)


def pending() -> bool:
    """Are releases queued or running? (From Python 3.13: or may be, while any finalizer is registered.)"""
    return _visible() or (_HANDOFF and _releaser is not None and bool(_live))


def flush(timeout: float | None = 30.0) -> bool:
    """Wait until the releases queued so far have run; False if ``timeout`` passed first.

    Called from the releaser itself (a release that allocates) it returns at once.
    """
    # The releaser never waits for itself (a release that frees into a pool that flushes), and
    # at exit nothing waits: the exiting thread runs what is left, in order.
    if _exiting or getattr(_on_releaser, "yes", False):
        return True
    _run_flush_hooks()          # parked releases run here, on this thread
    if not pending():
        return True
    if _releaser is None:
        if not THREADED or _shutdown:
            return True
        _start()                # (a forked child whose objects died before it made any)
    # A bare lock, not threading.Event: an interrupt inside Event.wait can corrupt its Condition;
    # an interrupted lock.acquire leaves the lock consistent (the releaser unlocks it later).
    # Again while something is pending: a release can drop the last reference to another owner
    # (a wrapper's owner tensor), whose release is queued behind the marker.
    deadline = None if timeout is None else _monotonic() + timeout
    while True:
        marker = _thread.allocate_lock()
        marker.acquire()
        _put(marker)
        if not marker.acquire(True, -1 if deadline is None else max(0.0, deadline - _monotonic())):
            return False
        _run_flush_hooks()      # (what the releaser's work parked)
        if not _visible():
            return True


def _at_exit() -> None:
    """Run every finalizer still registered, newest first, on this thread; then stop for good."""
    global _shutdown, _releaser, _exiting
    with _lock:
        _exiting = True
        t, _releaser = _releaser, None
    if t is not None and t.is_alive():
        _put(_STOP)
        t.join(5.0)
    get = _queue.get_nowait
    try:
        while _live or not _queue.empty():
            # objects that die meanwhile, and interrupted releases, are queued: run those first
            while not _queue.empty():
                _dispatch_quietly(get())
            _claimed.clear()                # (a claim of a thread still running at exit)
            if _live:
                f = next(reversed(_live))
                _call_quietly(f)
                _live.pop(f, None)          # run once, whatever it did
    finally:
        _shutdown = True


def _call_quietly(f: Finalizer) -> None:
    try:
        f()
    except BaseException:       # noqa: BLE001 -- even an interrupt: the next one must still run
        pass


def _dispatch_quietly(item) -> None:
    try:
        _dispatch(item)
    except BaseException:       # noqa: BLE001 -- as _call_quietly
        pass


def _after_fork_in_child() -> None:
    global _releaser, _lock
    _releaser = None            # the parent's thread does not exist here; start one on demand
    _lock = threading.Lock()    # another parent thread may have held it at the fork
    _busy.clear()
    _claimed.clear()            # claims of parent threads that do not exist here
    if THREADED and (_live or not _queue.empty()):
        _start()


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)
