"""The fuzzer's model of what exists, and the oracle that judges every call.

What "foreign" means here (the stub promises to survive all of these; see docs/hardening.md):

* as a **handle** (stream, event, context, aclTensor, aclIntArray, executor, ...): NULL; a live
  handle of another kind; a destroyed handle; a live handle plus a few bytes; a random integer;
  the address of ordinary host memory. Handles are looked up, never dereferenced, so any integer
  is fair game.
* as a **device pointer** (the device side of a copy, a memset target, a tensor's data address, a
  workspace): NULL; a random integer; host memory the runtime does not know; pinned host memory;
  a pointer into a freed device allocation; a live device pointer at any offset, misaligned, or
  too close to the end for the size passed.
* as a **host pointer** (the host side of a copy, an array a function reads, an out-parameter):
  only NULL or real memory large enough for what a *successful* call would touch. No C library
  can check a host pointer's extent -- the real CANN cannot either -- so the fuzzer never lies
  there (`ensure_host_span`).
"""
from __future__ import annotations

import collections
import ctypes
import random

import numpy as np

from pyaclnn import capi
from pyaclnn.capi import DECLARATIONS, ENUM_MEMBERS

import adversarial as adv

# ---- the status oracle ---------------------------------------------------------------------------

# The documented statuses: every code the public headers name, by family (acl_base_rt.h and
# rt_error_codes.h for aclError functions, op_errno.h for aclnnStatus functions).
_RUNTIME_CODES = frozenset({0, *ENUM_MEMBERS["acl_error"].values(), *ENUM_MEMBERS["rt_error"].values()})
_ACLNN_CODES = frozenset(ENUM_MEMBERS["aclnn_status"].values())

# Failures the vendor documents as silent (no message left).
SILENT_FAILURES = {("aclInit", capi.ACL_ERROR_REPEAT_INITIALIZE)}


# Functions whose aclError result reports an earlier failure, not their own.
REPORTERS = frozenset({"aclrtGetLastError", "aclrtPeekAtLastError"})


def _family(name: str) -> str:
    """'runtime' (returns aclError), 'aclnn' (aclnnStatus), 'handle' (returns a pointer) or 'value'."""
    decl = DECLARATIONS[name]
    if name in REPORTERS:
        return "value"
    if decl.startswith("aclError "):
        return "runtime"
    if decl.startswith("aclnnStatus "):
        return "aclnn"
    if "*" in decl.split("(")[0]:
        return "handle"
    return "value"


class Violation(Exception):
    """A broken promise of the C ABI (kept, printed and counted; the run goes on)."""


# ---- the model -----------------------------------------------------------------------------------

# Kinds of object the fuzzer creates. Runtime and aclnn handles share one namespace of "kinds" so a
# handle of one kind can be passed where another is expected.
KINDS = ("stream", "event", "context", "tensor", "scalar", "int_array", "float_array", "bool_array",
         "tensor_list", "scalar_list", "executor")
DESTROYERS = {"stream": "aclrtDestroyStream", "event": "aclrtDestroyEvent", "context": "aclrtDestroyContext",
              "tensor": "aclDestroyTensor", "scalar": "aclDestroyScalar", "int_array": "aclDestroyIntArray",
              "float_array": "aclDestroyFloatArray", "bool_array": "aclDestroyBoolArray",
              "tensor_list": "aclDestroyTensorList", "scalar_list": "aclDestroyScalarList",
              "executor": "aclDestroyAclOpExecutor"}
MAX_LIVE = {"stream": 8, "event": 16, "context": 4, "tensor": 64, "scalar": 16, "int_array": 16,
            "float_array": 16, "bool_array": 16, "tensor_list": 8, "scalar_list": 8, "executor": 16}
NN_KINDS = frozenset(KINDS[3:])          # created by this process only, so the model is exact

NOT_AN_OBJECT = 0xDEADBEEF                # stands in when a list of dead handles turns out empty
HOST_BUFFER_BYTES = 1 << 18               # every honest host pointer has at least this much behind it
MAX_DEVICE_ALLOC = 1 << 16                # successful aclrtMalloc sizes stay below this


# Destroyed handles and freed pointers are real addresses that malloc may hand out again. When it does
# depends on timing: the stub's stream workers free what a task held (a single-use executor, for one)
# after the task ran, and device memory freed while work is queued is released only once every stream
# is idle. So a dead value is checked against the model when it is picked, and again just before the
# call that takes it (World.call): an object created in between (an operator's perturbations create
# tensors after an earlier argument got a destroyed one) may have been given its address in one run
# and not in another. Both marks are ints, so ctypes takes them as they are.
class DeadHandle(int):
    """A destroyed handle: foreign as long as no object the model knows lives at its address."""


class FreedPointer(int):
    """A freed device or pinned pointer: foreign as long as no live block the model knows holds it."""


def padded_size(nbytes: int, pad: bool) -> int:
    """Bytes a copy may touch in an aclrtMalloc (pad) / aclrtMallocAlign32 block of nbytes."""
    rounded = (nbytes + 31) // 32 * 32
    return rounded + 32 if pad else rounded


class World:
    """Live and dead objects, pointer pools, and the checked call wrapper."""

    def __init__(self, rng: random.Random, trace=None, device_count: int = 2):
        self.rng = rng
        self.trace = trace
        self.device_count = device_count
        self.calls = 0
        self.oracle_reads = 0
        self.per_function = collections.Counter()
        self.failures = collections.Counter()          # name -> non-zero statuses seen
        self.violations: list[str] = []
        self.live: dict[str, list[int]] = {k: [] for k in KINDS}
        self.dead: dict[str, collections.deque] = {k: collections.deque(maxlen=32) for k in KINDS}
        self.owned_tensors: set[int] = set()           # tensors a list owns (its destroy frees them)
        self.owned_scalars: set[int] = set()
        self.list_members: dict[int, list[int]] = {}   # live list -> the elements it owns
        self.device: dict[int, int] = {}               # live device block -> bytes a copy may touch
        self.freed_device: collections.deque = collections.deque(maxlen=64)
        self.pinned: dict[int, int] = {}               # live aclrtMallocHost block -> bytes
        self.freed_pinned: collections.deque = collections.deque(maxlen=32)
        # Honest host memory: big buffers of random bytes (so copies carry NaNs, huge integers and the
        # like into device memory that kernels may read), kept alive for the whole run.
        self._host = [np.frombuffer(rng.randbytes(HOST_BUFFER_BYTES + 4096), dtype=np.uint8).copy()
                      for _ in range(4)]
        self._scratch: list[np.ndarray] = []            # extra buffers for one call
        # "Foreign" host memory: readable, random bytes, never registered with the runtime.
        self._garbage = np.frombuffer(rng.randbytes(4096), dtype=np.uint8).copy()
        self._libc = ctypes.CDLL(None)
        self._libc.free.argtypes = [ctypes.c_void_p]

    # ---- calling -------------------------------------------------------------------------------

    def call(self, name: str, *args, must_fail: str | None = None):
        """Calls C function ``name`` and judges it; returns what C returned.

        ``must_fail`` names the foreign argument when the call has to be refused.
        """
        args = tuple(self._still_dead(a) for a in args)
        if self.trace:
            self.trace.write(f"{self.calls} {name}{_show(args)}\n")
            self.trace.flush()
        fn = getattr(capi, name)
        result = fn(*args)
        if self.trace:
            self.trace.write(f"  -> {result!r}\n")
        self.calls += 1
        self.per_function[name] += 1
        family = _family(name)
        failed = (family in ("runtime", "aclnn") and result != 0) or (family == "handle" and not result)
        if family == "runtime" and result not in _RUNTIME_CODES:
            self.violate(f"{name} returned {result}, not an ACL_ERROR_* code of the headers")
        if family == "aclnn" and result not in _ACLNN_CODES:
            self.violate(f"{name} returned {result}, not an ACLNN_* code of the headers")
        message = self.recent_error()   # read (and cleared) after every call: the next starts clean
        if failed:
            self.failures[name] += 1
            if self.trace and message:
                # Indented line by line (a synchronisation reports each failed stream on a line of its
                # own), so the lines that start with a digit are exactly the calls.
                self.trace.write("  !! " + message.strip()[:300].replace("\n", "\n     ") + "\n")
            if (name, result) in SILENT_FAILURES:
                pass
            elif not message:
                self.violate(f"{name} failed ({result}) and left no message for aclGetRecentErrMsg")
            elif name.lower() not in message.lower():   # AclSet*TensorAddr report as aclSet*TensorAddr
                self.violate(f"{name} failed ({result}) but the message does not name it: {message!r}")
        elif must_fail and family != "value":
            self.violate(f"{name} accepted a foreign {must_fail}{_show(args)} (returned {result!r})")
        return result

    def _still_dead(self, value):
        """value, or NOT_AN_OBJECT if it was handed out dead and an object has taken its address since."""
        if type(value) is DeadHandle and self.is_live_anywhere(value):
            return DeadHandle(NOT_AN_OBJECT)
        if type(value) is FreedPointer and self.where(value)[0] != "pageable":
            return FreedPointer(NOT_AN_OBJECT)
        return value

    def recent_error(self) -> str | None:
        self.oracle_reads += 1
        text = capi.aclGetRecentErrMsg()
        return text.decode(errors="replace") if text else None

    def violate(self, what: str) -> None:
        self.violations.append(f"call {self.calls}: {what}")

    def free_c(self, p) -> None:
        """Releases an array a getter handed out (the stub allocates them with malloc)."""
        self._libc.free(p)

    # ---- objects -------------------------------------------------------------------------------

    def add(self, kind: str, handle: int) -> None:
        if handle in self.live[kind]:      # a pooled runtime object handed out again
            return
        self.live[kind].append(handle)

    def kill(self, kind: str, handle: int) -> None:
        if handle in self.live[kind]:
            self.live[kind].remove(handle)
            self.dead[kind].append(handle)
        if kind == "tensor":
            self.owned_tensors.discard(handle)
        elif kind == "scalar":
            self.owned_scalars.discard(handle)

    def any_live(self, kind: str) -> int | None:
        return self.rng.choice(self.live[kind]) if self.live[kind] else None

    def free_tensor(self) -> int | None:
        """A live tensor no list owns (so a destroy or a list may take it)."""
        free = [t for t in self.live["tensor"] if t not in self.owned_tensors]
        return self.rng.choice(free) if free else None

    def is_live_anywhere(self, p: int) -> bool:
        return any(p in v for v in self.live.values()) or p in self.device or p in self.pinned

    def handle(self, kind: str, live_weight: float = 0.55) -> tuple[int | None, str | None]:
        """A value for a ``kind`` handle argument and, when it is foreign, what it is.

        Returns (value, foreign) where foreign is None for NULL or a live handle of this kind, or a
        description when the stub must refuse it.
        """
        rng = self.rng
        r = rng.random()
        if r < live_weight and self.live[kind]:
            return rng.choice(self.live[kind]), None
        r = rng.random()
        if r < 0.2:
            return None, None
        if r < 0.4:
            others = [(k, h) for k in KINDS if k != kind for h in self.live[k]]
            if others:
                other_kind, h = rng.choice(others)
                return h, f"{other_kind} passed as {kind}"
        if r < 0.55 and self.dead[kind]:
            # Only handles whose address is not live again (see DeadHandle). Runtime objects are
            # pooled, and a destroyed stream may come back as some thread's default stream, which the
            # model does not see; aclnn objects are all made here, so a dead one is certainly foreign.
            h = self.pick([h for h in self.dead[kind] if not self.is_live_anywhere(h)])
            if h is None:                 # (no further draw: the next calls must not depend on it)
                return NOT_AN_OBJECT, f"random integer as {kind}"
            return DeadHandle(h), f"destroyed {kind}" if kind in NN_KINDS else None
        if r < 0.65 and self.live[kind]:
            return rng.choice(self.live[kind]) + rng.choice((1, 4, 8, 16, -8)), f"{kind} handle plus an offset"
        if r < 0.75:
            return self.garbage_address(), f"host memory as {kind}"
        if r < 0.85 and self.device:
            return rng.choice(list(self.device)), f"device memory as {kind}"
        return adv.wild_address(rng), f"random integer as {kind}"

    def pick(self, candidates: list):
        """One of candidates (None if empty) for exactly one random draw, whatever their number.

        For lists whose length depends on addresses (what malloc reused): the draws that follow stay
        the same from run to run, so one seed gives one sequence of calls.
        """
        r = self.rng.random()
        return candidates[int(r * len(candidates))] if candidates else None

    # ---- memory --------------------------------------------------------------------------------

    def freed_pointer(self, freed) -> FreedPointer:
        """One of the freed pointers no live block holds again (NOT_AN_OBJECT if none), for one draw."""
        p = self.pick([p for p in freed if self.where(p)[0] == "pageable"])
        return FreedPointer(NOT_AN_OBJECT if p is None else p)

    def garbage_address(self) -> int:
        return self._garbage.ctypes.data + self.rng.randrange(0, 4000)

    def host_address(self, offset_max: int = 4096) -> int:
        """Honest pageable host memory: HOST_BUFFER_BYTES writable bytes from the result on."""
        return self.rng.choice(self._host).ctypes.data + self.rng.randrange(0, offset_max)

    def host_span(self, nbytes: int) -> int:
        """Fresh host memory of exactly nbytes (kept alive until end_call)."""
        buf = np.zeros(max(nbytes, 1), dtype=np.uint8)
        self._scratch.append(buf)
        return buf.ctypes.data

    def end_call(self) -> None:
        self._scratch.clear()

    def device_address(self) -> tuple[int | None, str]:
        """A value for a device-side pointer, with its category (see the module docstring)."""
        rng = self.rng
        r = rng.random()
        if r < 0.55 and self.device:
            base = rng.choice(list(self.device))
            span = self.device[base]
            offset = rng.choice((0, 0, 0, 1, 3, 32, span // 2, span - 1, span, span + 32))
            # Past its end, p must not land in a block malloc happened to place right after it.
            return self._outside_other_blocks(base + offset, base), "device"
        r = rng.random()
        if r < 0.15:
            return None, "null"
        if r < 0.35 and self.freed_device:
            p = self.freed_pointer(self.freed_device)
            return (p, "freed") if p != NOT_AN_OBJECT else (p, "wild")
        if r < 0.5 and self.pinned:
            return rng.choice(list(self.pinned)), "pinned"
        if r < 0.7:
            return self.host_address(), "host"
        return self._outside_other_blocks(adv.wild_address(rng)), "wild"

    def _outside_other_blocks(self, p: int, own_base: int | None = None) -> int:
        """p, or NOT_AN_OBJECT if p lies in a live block other than own_base's.

        Keeps what the runtime makes of a pointer (and so what the fuzzer decides from `where`, e.g.
        in calls_runtime._make_honest, and what aclrtFree frees) a function of the model alone, never
        of the addresses malloc happened to return. Both values print as an address in the trace.
        """
        kind, base, _ = self.where(p)
        return p if kind == "pageable" or base == own_base else NOT_AN_OBJECT

    def where(self, p: int | None) -> tuple[str, int, int]:
        """How the runtime classifies p: ('device'|'pinned'|'pageable', block base, block bytes)."""
        if p:
            for table, kind in ((self.device, "device"), (self.pinned, "pinned")):
                for base, nbytes in table.items():
                    if base <= p < base + nbytes:
                        return kind, base, nbytes
        return "pageable", p or 0, 0


def _show(args) -> str:
    """Short text of an argument list for the trace."""
    out = []
    for a in args:
        if isinstance(a, int) and not isinstance(a, bool):
            out.append(hex(a) if abs(a) > 4096 else str(a))
        elif isinstance(a, (float, str, bytes, type(None), bool)):
            out.append(repr(a))
        else:
            out.append(type(a).__name__)
    return "(" + ", ".join(out) + ")"
