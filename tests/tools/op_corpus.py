#!/usr/bin/env python3
"""Differential corpus of operator calls: generate, record, replay (stdlib + numpy + ctypes).

Every operator libopapi.so exports gets a fixed list of calls (valid ones and invalid ones); each call
is stored as plain JSON together with what the emulator did with it today. Replaying the stored calls
against a rebuilt emulator and comparing the results proves that a rewrite of the operators' C code
changed nothing a caller can observe. ``tests/test_op_corpus.py`` does the replay.

Files (``tests/data/op_corpus/``)
---------------------------------
``specs.json.gz``          per operator: its parameter list as recorded (name, kind, C type, role,
                           optional: the replay builds its ctypes argtypes from this, never from
                           pyaclnn's registries) and its calls. The same calls run on both SoCs.
``results-<SoC>.json.gz``  per operator, per call: the result dict (below), for Ascend950PR (the
                           default SoC) and Ascend910B4.

A call spec
-----------
``{"a": [arg, ...], ...}`` with one ``arg`` per parameter of the phase-1 function except
workspaceSize and executor, in order: ``None`` is a NULL pointer; numbers, bools, strings (``str``,
sent as UTF-8) and dtypes are passed as they are; a tensor is ``{"d": dtype, "sh": shape, "st":
strides, "o": offset, "ss": storage dims, "f": format, "n": allocation bytes, "fill": fill rule}``
(``st``/``o``/``ss``/``f`` optional: contiguous, 0, the view shape, ND), or ``{"same": k}`` (the very handle
of argument k: in-place aliasing), or with ``"as": k`` instead of ``n``/``fill`` (a new descriptor over
argument k's memory), or with ``"stale": 1`` (created, then destroyed just before phase 1). A tensor
list is ``{"list": [tensor, ...]}`` (the list owns its tensors), a scalar ``{"d": dtype, "b": hex of
its bytes}``, a scalar list ``{"slist": [scalar, ...]}``, an int / bool / float array ``{"ia": [...]}``
/ ``{"ba": [...]}`` / ``{"fa": [...]}``. Optional keys of the call: ``"nw": 1`` / ``"ne": 1`` (NULL
workspaceSize / executor pointer), ``"rep": n`` (executor made repeatable and launched n times, then
destroyed), ``"s0": 1`` (launched on the NULL default stream), ``"wsn": 1`` (phase 2 gets a NULL
workspace whatever size phase 1 asked for).

Fill rules (``"fill"``) make an allocation's bytes from a seed with SHAKE-256 (stable forever):
``{"m": "raw", "s": seed}`` the bytes themselves (NaNs, infs, denormals, any bit pattern);
``{"m": "int", "s", "lo", "hi"}`` integers in [lo, hi) stored in the dtype (for floats: integral
values, for BOOL 0/1); ``{"m": "bits", "s"}`` 0 or 1 from one seeded bit per element (what "int" with
[0, 2) gives from 32 bits: the attention operators' 2048 x 2048 masks, 16 MB of SHAKE otherwise);
``{"m": "uni", "s", "lo", "hi"}`` uniform reals stored in the dtype (rounded to nearest even);
``{"m": "const", "v"}``; ``{"m": "pat", "b": byte}`` (outputs: a fixed pattern).

What is compared (the result of a call)
---------------------------------------
``s1``/``m1``/``ws``: phase-1 status, its aclGetRecentErrMsg text (normalised, below), the workspace
size. When phase 1 succeeded: ``s2``/``m2`` phase-2 status and message (a list with one entry per
launch when ``rep``; ``sr``/``de`` the status of aclSetAclOpExecutorRepeatable / aclDestroyAclOpExecutor
then), ``sy``/``my`` the status and message of aclrtSynchronizeStream (asynchronous kernel faults),
``h`` a sha256 (first 16 hex digits) of EVERY tensor allocation after the run, inputs too (an operator
must not write them), in the order of allocation, ``v`` the view shape aclGetViewShape reports for
output tensors whose shape is not what was passed in (data-dependent shapes: MaskedSelect,
NonzeroV2). When phase 1 failed, ``h`` is one digest over all allocations (nothing may have been
written), and ``exleak`` would say that it handed out an executor anyway. ``mk`` lists arguments
whose descriptor could not be created (aclCreateTensor returned NULL, e.g. rank > 25; the NULL is
then passed on). ``crash`` (the signal) marks a call that killed the process; the replay goes on in a
new process after it.

An allocation is hashed and filled over its whole padded block (aclrtMalloc(n) gives n rounded up to
32 plus 32 bytes, and a view may reach into that padding): see ``padded_size``.

Normalised / excluded (what differs between identical runs): the ``[PID: n] <date-time>`` prefix of
each message line; hexadecimal addresses (``0x...`` -> ``0x?``: handles, device pointers and streams
differ between runs); the task number in stream fault messages (``task 17 on stream`` -> ``task # on
stream``: it counts the launches since the process started, so it depends on which calls ran
before). The workspace handed to phase 2 is pre-filled with a fixed byte and not hashed. The replay
processes run with PYACLNN_STUB_KERNEL_THREADS=3 (PYACLNN_CORPUS_THREADS), so that even these small
tensors are spread over threads: the baseline was recorded with one thread, so the replay also shows
that no result depends on the thread count (an in-place operator on an output view that overlaps
itself, a 0 stride, used to: found while building this corpus, fixed in the elementwise engine).
They also run with PYACLNN_STUB_MATMUL=portable: the matmul engine's hand-written loop, bit-identical on
every CPU, with which the corpus was recorded (the default engine, OpenBLAS, is not). Every other
PYACLNN_STUB_* variable is removed (PYACLNN_STUB_ARNQ_* / _AMP_* switch arithmetic
variants on purpose), except PYACLNN_STUB_LIBDIR, which picks the build under test. The recorder
checks determinism by recording twice (``record`` does that by default) and stores nothing if a
single result differs.

How to use
----------
``python tests/tools/op_corpus.py record``
    Records every operator that libopapi.so exports (nm -D) and the corpus does not have yet (all of
    them the first time; parameter lists from the build's catalog, lib/ops.json), on both SoCs.
    Per operator: CALLS_PER_OP random calls (about 2/3 plausible valid calls from its builder, 1/3
    with one argument made wrong), probed once on each SoC; the first random call that succeeds on
    both SoCs (else on one) becomes the base of the systematic calls put in front of them
    (``generate_structural``: NULL for each pointer parameter, NULL workspaceSize / executor, a
    destroyed tensor per tensor parameter, NULL / empty lists, a wrong dtype / shape / rank per
    tensor, out-of-range values per attribute, NULL stream, repeatable executor, NULL workspace).
    Then everything is recorded twice per SoC and nothing is stored if any result differs.
    Existing operators' calls and results are NEVER re-recorded by this command: that is the point
    of the corpus. When an operator's behaviour is changed on purpose (a bug fix), say so in the
    commit and use ``record --rerecord aclnnXxx`` for exactly that operator; the diff of its results
    is then the review of the change. Never re-record to make a replay pass.
``python tests/tools/op_corpus.py replay [--soc S] [--ops A,B] [--sample N]``
    Replays and prints the differences (what tests/test_op_corpus.py does; the whole corpus takes
    about 19 s per SoC, a third of it generating the seeded inputs).
``python tests/tools/op_corpus.py stats [--verbose]``
    Calls, successful calls and distinct failure messages per operator.
``python tests/tools/op_corpus.py fuzz --seed S --calls N [--families F,..|--ops A,..] [--soc S]``
    The generator as a fuzzer (docs/hardening.md, "The operator fuzzer"): N random calls per operator
    from stream S (the corpus's own is 0 and never changes: ``Gen(op, params, salt)``), a fraction
    (--adversarial, 0.3) with adversarial views (``adversarial_views``: negative strides, offsets at
    the allocation's end, views past it, dims whose product overflows, zero dims beside huge ones, 25
    dims, 0-stride outputs, aliases), run on each SoC, nothing stored. Reports every call that killed
    its process (signal and sanitizer report: preload the ASan build of docs/hardening.md) and every
    call still running after --call-timeout seconds (ended by SIGALRM: OP_CORPUS_CALL_TIMEOUT in the
    child); --save FILE keeps them, ``fuzz --specs FILE`` runs them again.
``PYACLNN_CORPUS_DIR=/tmp/x python tests/tools/op_corpus.py record --once --calls 1000``
    An exploratory recording into another directory (``OP_CORPUS_VERBOSE=1`` prints the stderr of a
    process a call killed).

Adding an operator: export it from libopapi.so with its definition (its parameter kinds are read from
the catalog's signature registry at generation time, and stored with the calls), then run
``record``: its calls come from a seed of its own (crc32 of its name, so no other operator's calls
change), made by the generic builder for its parameter kinds (``build_elementwise``: one dtype,
broadcast-compatible shapes) or by a builder of ``BUILDERS`` / a dtype pool of ``POOLS``. If
``stats --verbose`` shows few successful calls for it, add a builder that makes plausible valid
arguments (read its tests and its phase-1 messages) and record it again with
``record --rerecord aclnnXxx`` (allowed for an operator added in the same change).
"""
from __future__ import annotations

import argparse
import collections
import ctypes
import functools
import gzip
import hashlib
import json
import math
import os
import pickle
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CORPUS_DIR = Path(os.environ.get("PYACLNN_CORPUS_DIR") or REPO / "tests" / "data" / "op_corpus")
SPECS_FILE = "specs.json.gz"
SOCS = ("Ascend950PR", "Ascend910B4")
FORMAT = 1
CALLS_PER_OP = 180         # random calls per operator; the systematic ones come on top

# ---- data types -------------------------------------------------------------------------------------

DT = dict(FLOAT=0, FLOAT16=1, INT8=2, INT32=3, UINT8=4, INT16=6, UINT16=7, UINT32=8, INT64=9, UINT64=10,
          DOUBLE=11, BOOL=12, STRING=13, COMPLEX64=16, COMPLEX128=17, BF16=27, INT4=29, UINT1=30, COMPLEX32=33,
          HIFLOAT8=34, FLOAT8_E5M2=35, FLOAT8_E4M3FN=36, FLOAT8_E8M0=37, FLOAT6_E3M2=38, FLOAT6_E2M3=39,
          FLOAT4_E2M1=40, FLOAT4_E1M2=41)
# bytes of one element in memory as libnnopbase counts them (4-bit types: one byte per element is an
# upper bound of what they need, so allocations are always large enough)
ITEMSIZE = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1, 16: 8, 17: 16, 27: 2,
            29: 1, 30: 1, 33: 4, 34: 1, 35: 1, 36: 1, 37: 1, 38: 1, 39: 1, 40: 1, 41: 1}
NP_FLOAT = {0: np.float32, 1: np.float16, 11: np.float64}
NP_INT = {2: np.int8, 3: np.int32, 4: np.uint8, 6: np.int16, 7: np.uint16, 8: np.uint32, 9: np.int64,
          10: np.uint64, 12: np.uint8}
INTS = (2, 6, 3, 9, 4)
ALL_INTS = (2, 6, 3, 9, 4, 7, 8, 10)
EXOTIC = (16, 17, 29, 30, 33, 34, 35, 36, 37, 38, 39, 40, 41)
ND, NCHW, NHWC, NZ = 2, 0, 1, 29


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 (nearest even) -> bfloat16 bits (nearest even); NaN -> 0x7FC0 with its sign."""
    f = np.asarray(x, np.float64).astype(np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    out = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    out[nan] = (0x7FC0 | ((bits[nan] >> 16) & 0x8000)).astype(np.uint16)
    return out


def encode_values(values, dtype: int) -> bytes:
    """Numbers (float64 / int64 array) as the bytes of `dtype` (FLOAT, FLOAT16, BF16, DOUBLE, ints, BOOL)."""
    with np.errstate(over="ignore", invalid="ignore"):      # out of range -> inf, as a C cast rounds
        return _encode(np.asarray(values), dtype)


def _encode(v: np.ndarray, dtype: int) -> bytes:
    if dtype == 27:
        return _bf16_bits(v.astype(np.float64)).tobytes()
    if dtype in NP_FLOAT:
        return v.astype(np.float64).astype(NP_FLOAT[dtype]).tobytes()
    if dtype == 12:
        return (v != 0).astype(np.uint8).tobytes()
    if dtype in NP_INT:
        if v.dtype.kind == "f":
            v = np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0)
            v = np.trunc(v)
        return v.astype(np.int64).astype(NP_INT[dtype]).tobytes()
    raise ValueError(f"no encoder for dtype {dtype}")


def padded_size(n: int) -> int:
    """What aclrtMalloc(n) really gives (and a copy may touch): n rounded up to 32, plus 32 bytes.
    The corpus fills and hashes all of it, so that a view reaching past its tensor's bytes reads
    the same values in every run."""
    return (max(n, 1) + 31) // 32 * 32 + 32


def seeded_bytes(seed: int, n: int) -> bytes:
    return hashlib.shake_256(b"pyaclnn-op-corpus/%d" % seed).digest(n) if n > 0 else b""


def fill_bytes(fill: dict, dtype: int, nbytes: int) -> bytes:
    """The bytes a fill rule puts in an allocation of `nbytes` (see the module docstring)."""
    mode = fill["m"]
    if mode == "pat":
        return bytes([fill.get("b", 0xA5)]) * nbytes
    if mode == "raw" or (dtype not in NP_FLOAT and dtype not in NP_INT and dtype != 27):
        return seeded_bytes(fill.get("s", 0), nbytes)
    size = ITEMSIZE[dtype]
    n, tail = divmod(nbytes, size)
    if mode == "const":
        vals = np.full(n, fill["v"], dtype=np.float64 if isinstance(fill["v"], float) else np.int64)
    elif mode == "bits":
        vals = np.unpackbits(np.frombuffer(seeded_bytes(fill["s"], (n + 7) // 8), np.uint8), count=n,
                             bitorder="little")
    elif mode == "list":      # the values, then zeros
        vals = np.zeros(n, np.float64 if any(isinstance(v, float) for v in fill["v"]) else np.int64)
        k = min(n, len(fill["v"]))
        vals[:k] = fill["v"][:k]
    else:
        u = np.frombuffer(seeded_bytes(fill["s"], 4 * n), np.uint32).astype(np.int64)
        lo, hi = fill["lo"], fill["hi"]
        if mode == "int":
            vals = lo + u % max(hi - lo, 1)
        elif mode == "uni":
            vals = lo + (hi - lo) * (u.astype(np.float64) / 4294967296.0)
        else:
            raise ValueError(f"unknown fill mode {mode!r}")
    return encode_values(vals, dtype) + bytes(tail)


# ---- message normalisation ---------------------------------------------------------------------------

_PREFIX = re.compile(r"^\[PID: \d+\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d+\.\d+ ", re.M)
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_TASK = re.compile(r"\btask \d+ on stream")


def normalise(msg: bytes | None) -> str | None:
    if not msg:
        return None
    text = msg.decode("utf-8", "replace")
    text = _PREFIX.sub("", text)
    text = _HEX.sub("0x?", text)
    text = _TASK.sub("task # on stream", text)
    return text.rstrip("\n")


# ---- the replay engine (runs in a child process, one SoC per process) -------------------------------

def find_libopapi() -> str:
    """Path of the libopapi.so pyaclnn loaded (pyaclnn's loader, else this process's memory map)."""
    from pyaclnn import capi
    capi.cfunc("aclGetRecentErrMsg")       # the three libraries are opened together
    paths = []
    try:
        from pyaclnn import _loader
        paths = list(_loader.backend().library_paths)
    except Exception:                      # a reorganised loader: fall back on the memory map
        pass
    with open("/proc/self/maps") as maps:
        paths += [line.split()[-1] for line in maps if "/libopapi" in line]
    paths = [p for p in paths if os.path.basename(p).startswith("libopapi")]
    if not paths:
        raise RuntimeError("libopapi is not loaded")
    return paths[0]


def _ctype(kind: str, ctype: str):
    c = ctypes
    if kind in ("double",):
        return c.c_double
    if kind == "float":
        return c.c_float
    if kind == "bool":
        return c.c_bool
    if kind == "dtype":
        return c.c_int
    if kind == "int":
        return {"int64_t": c.c_int64, "int8_t": c.c_int8, "int": c.c_int, "uint64_t": c.c_uint64,
                "int32_t": c.c_int32, "uint32_t": c.c_uint32, "int16_t": c.c_int16, "uint8_t": c.c_uint8,
                "uint16_t": c.c_uint16, "size_t": c.c_size_t}[ctype.replace("const ", "").strip()]
    if kind == "string":
        return c.c_char_p
    return c.c_void_p     # tensors, scalars, arrays, lists, workspace_size, executor


class Replayer:
    """Builds the arguments of stored call specs, runs both phases, and describes what happened."""

    def __init__(self):
        from pyaclnn import capi           # runtime and object API only (line-by-line C mirror)
        self.capi = capi
        self.lib = ctypes.CDLL(find_libopapi())
        self.libc = ctypes.CDLL(None)
        self.libc.free.argtypes = [ctypes.c_void_p]
        check = lambda rc, what: rc == 0 or (_ for _ in ()).throw(RuntimeError(f"{what} failed: {rc}"))  # noqa: E731
        check(capi.aclInit(None), "aclInit")
        check(capi.aclrtSetDevice(0), "aclrtSetDevice")
        self.stream = ctypes.c_void_p()
        check(capi.aclrtCreateStream(ctypes.byref(self.stream)), "aclrtCreateStream")
        self.fns: dict = {}

    def close(self):
        c = self.capi
        c.aclrtDestroyStream(self.stream)
        c.aclrtResetDevice(0)
        c.aclFinalize()

    def functions(self, op: str, params: list):
        fns = self.fns.get(op)
        if fns is None:
            p1 = getattr(self.lib, op + "GetWorkspaceSize")
            p1.argtypes = [_ctype(p[1], p[2]) for p in params]
            p1.restype = ctypes.c_int
            p2 = getattr(self.lib, op)
            p2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p]
            p2.restype = ctypes.c_int
            fns = self.fns[op] = (p1, p2)
        return fns

    def message(self) -> str | None:
        return normalise(self.capi.aclGetRecentErrMsg())

    # -- objects --
    def _malloc(self, nbytes: int, fill: dict, dtype: int) -> tuple[int, int]:
        """aclrtMalloc(nbytes); the whole padded block (padded_size) filled by the fill rule.
        Returns (pointer, padded size)."""
        c = self.capi
        p = ctypes.c_void_p()
        rc = c.aclrtMalloc(ctypes.byref(p), max(nbytes, 1), 0)
        if rc != 0:
            raise RuntimeError(f"aclrtMalloc({nbytes}) failed: {rc}")
        size = padded_size(nbytes)
        data = fill_bytes(fill, dtype, size)
        buf = ctypes.create_string_buffer(data, len(data))
        rc = c.aclrtMemcpy(p.value, size, buf, len(data), c.ACL_MEMCPY_HOST_TO_DEVICE)
        if rc != 0:
            raise RuntimeError(f"aclrtMemcpy H2D of the padded block failed: {rc} "
                               f"{normalise(c.aclGetRecentErrMsg())}")
        return p.value, size

    def _read(self, ptr: int, nbytes: int) -> bytes:
        if nbytes <= 0:
            return b""
        buf = ctypes.create_string_buffer(nbytes)
        rc = self.capi.aclrtMemcpy(buf, nbytes, ptr, nbytes, self.capi.ACL_MEMCPY_DEVICE_TO_HOST)
        if rc != 0:
            raise RuntimeError(f"aclrtMemcpy D2H failed: {rc}")
        return buf.raw

    def _tensor(self, spec: dict, st: dict, argno):
        """A tensor handle for spec (None when aclCreateTensor refused; recorded in st['mk'])."""
        c = self.capi
        if "as" in spec:
            ptr, nbytes = st["mem_of"][spec["as"]]
        else:
            ptr, nbytes = self._malloc(spec["n"], spec["fill"], spec["d"])
            st["mems"].append((ptr, nbytes))
        shape = spec["sh"]
        dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        strides = spec.get("st")
        st_arr = (ctypes.c_int64 * max(len(strides), 1))(*strides) if strides is not None else None
        ss = spec.get("ss", shape)
        ss_arr = (ctypes.c_int64 * max(len(ss), 1))(*ss)
        h = c.aclCreateTensor(dims, len(shape), spec["d"], st_arr, spec.get("o", 0), spec.get("f", ND),
                              ss_arr, len(ss), ptr)
        if not h:
            st["mk"].append(argno)
            c.aclGetRecentErrMsg()
            return None, ptr, nbytes
        return h, ptr, nbytes

    def _scalar(self, spec: dict):
        raw = bytes.fromhex(spec["b"])
        buf = ctypes.create_string_buffer(raw, max(len(raw), 16))
        return self.capi.aclCreateScalar(buf, spec["d"])

    def run(self, op: str, params: list, call: dict) -> dict:
        c = self.capi
        p1, p2 = self.functions(op, params)
        st = {"mems": [], "mk": [], "mem_of": {}}
        tensors, scalars, lists, arrays, stale = [], [], [], [], []
        outs = []                     # (argno, handle, expected shape) of output tensors
        argv = []
        specs = call["a"]
        in_params = [p for p in params if p[1] not in ("workspace_size", "executor")]
        handles: dict = {}
        try:
            for i, (p, spec) in enumerate(zip(in_params, specs)):
                kind = p[1]
                if spec is None:
                    argv.append(0 if kind in ("double", "float", "int", "dtype", "bool") else None)
                    continue
                if kind in ("double", "float", "int", "dtype", "bool"):
                    argv.append(spec)
                elif kind == "string":
                    argv.append(spec.encode("utf-8"))
                elif isinstance(spec, dict) and "same" in spec:
                    argv.append(handles.get(spec["same"]))
                elif isinstance(spec, dict) and "sh" in spec:
                    h, ptr, nbytes = self._tensor(spec, st, i)
                    st["mem_of"][i] = (ptr, nbytes)
                    handles[i] = h
                    if h:
                        (stale if spec.get("stale") else tensors).append(h)
                        if p[3] == "out" and not spec.get("stale"):
                            outs.append((i, h, spec["sh"]))
                    argv.append(h)
                elif isinstance(spec, dict) and "list" in spec:
                    items, dead = [], []
                    for j, t in enumerate(spec["list"]):
                        if t is None:
                            items.append(None)
                            continue
                        h, ptr, nbytes = self._tensor(t, st, [i, j])
                        items.append(h)
                        if h and t.get("stale"):
                            dead.append(h)
                        elif h and p[3] == "out":
                            outs.append(([i, j], h, t["sh"]))
                    for h in dead:                 # a destroyed element: the list gets a stale pointer
                        c.aclDestroyTensor(h)
                    arr = (ctypes.c_void_p * max(len(items), 1))(*items)
                    lh = c.aclCreateTensorList(arr, len(items))
                    if not lh:
                        st["mk"].append(i)
                        c.aclGetRecentErrMsg()
                        tensors.extend(h for h in items if h and h not in dead)
                    else:
                        lists.append(lh)
                    argv.append(lh)
                elif isinstance(spec, dict) and "slist" in spec:
                    items = [self._scalar(s) for s in spec["slist"]]
                    arr = (ctypes.c_void_p * max(len(items), 1))(*items)
                    lh = c.aclCreateScalarList(arr, len(items))
                    if not lh:
                        st["mk"].append(i)
                        c.aclGetRecentErrMsg()
                        scalars.extend(h for h in items if h)
                    else:
                        arrays.append(("aclDestroyScalarList", lh))
                    argv.append(lh)
                elif isinstance(spec, dict) and "b" in spec:
                    h = self._scalar(spec)
                    if not h:
                        st["mk"].append(i)
                        c.aclGetRecentErrMsg()
                    else:
                        scalars.append(h)
                    argv.append(h)
                elif isinstance(spec, dict) and "ia" in spec:
                    v = spec["ia"]
                    h = c.aclCreateIntArray((ctypes.c_int64 * max(len(v), 1))(*v), len(v))
                    arrays.append(("aclDestroyIntArray", h))
                    argv.append(h)
                elif isinstance(spec, dict) and "ba" in spec:
                    v = spec["ba"]
                    h = c.aclCreateBoolArray((ctypes.c_bool * max(len(v), 1))(*v), len(v))
                    arrays.append(("aclDestroyBoolArray", h))
                    argv.append(h)
                elif isinstance(spec, dict) and "fa" in spec:
                    v = spec["fa"]
                    h = c.aclCreateFloatArray((ctypes.c_float * max(len(v), 1))(*v), len(v))
                    arrays.append(("aclDestroyFloatArray", h))
                    argv.append(h)
                else:
                    raise ValueError(f"{op}: cannot build argument {i} ({kind}) from {spec!r}")
            for h in stale:                        # destroyed last, so nothing reuses their addresses
                c.aclDestroyTensor(h)
            ws = ctypes.c_uint64(0)
            ex = ctypes.c_void_p()
            c.aclGetRecentErrMsg()                 # whatever setup left behind
            s1 = p1(*argv, None if call.get("nw") else ctypes.byref(ws), None if call.get("ne") else ctypes.byref(ex))
            res = {"s1": s1, "m1": self.message(), "ws": ws.value}
            if st["mk"]:
                res["mk"] = st["mk"]
            if s1 == 0 and ex.value:
                res.update(self._launch(p2, ex.value, ws.value, call))
                res["h"] = [self._hash(p, n) for p, n in st["mems"]]
                shapes = {}
                for argno, h, want in outs:
                    got = self._view_shape(h)
                    if got != list(want):
                        shapes[json.dumps(argno)] = got
                if shapes:
                    res["v"] = shapes
            else:
                if s1 == 0:
                    res["noex"] = 1
                elif ex.value:                     # an executor handed out by a failed phase 1
                    res["exleak"] = c.aclDestroyAclOpExecutor(ex.value)
                    c.aclGetRecentErrMsg()
                d = hashlib.sha256()
                for p, n in st["mems"]:
                    d.update(self._read(p, n))
                res["h"] = d.hexdigest()[:16]
            return res
        finally:
            for h in tensors:
                c.aclDestroyTensor(h)
            for h in scalars:
                c.aclDestroyScalar(h)
            for h in lists:
                c.aclDestroyTensorList(h)
            for fn, h in arrays:
                if h:
                    getattr(c, fn)(h)
            for p, _ in st["mems"]:
                c.aclrtFree(p)
            c.aclGetRecentErrMsg()

    def _hash(self, ptr: int, nbytes: int) -> str:
        return hashlib.sha256(self._read(ptr, nbytes)).hexdigest()[:16]

    def _view_shape(self, h):
        arr, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
        if self.capi.aclGetViewShape(h, ctypes.byref(arr), ctypes.byref(n)) != 0:
            return None
        shape = [arr[k] for k in range(n.value)]
        self.libc.free(ctypes.cast(arr, ctypes.c_void_p))
        return shape

    def _launch(self, p2, ex: int, ws_size: int, call: dict) -> dict:
        c = self.capi
        out = {}
        ws_ptr = None
        if ws_size and not call.get("wsn"):
            p = ctypes.c_void_p()
            if c.aclrtMalloc(ctypes.byref(p), ws_size, 0) != 0:
                c.aclGetRecentErrMsg()
                out["wsalloc"] = "failed"
            else:
                ws_ptr = p.value
                c.aclrtMemset(ws_ptr, ws_size, 0x5C, ws_size)
        stream = None if call.get("s0") else self.stream
        reps = call.get("rep", 0)
        try:
            if reps:
                rc = c.aclSetAclOpExecutorRepeatable(ex)
                out["sr"] = rc
                s2, m2 = [], []
                for _ in range(reps):
                    s2.append(p2(ws_ptr, ws_size, ex, stream))
                    m2.append(self.message())
                out["s2"], out["m2"] = s2, m2
            else:
                out["s2"] = p2(ws_ptr, ws_size, ex, stream)
                out["m2"] = self.message()
            out["sy"] = c.aclrtSynchronizeStream(stream)
            out["my"] = self.message()
            if reps:
                out["de"] = c.aclDestroyAclOpExecutor(ex)
                c.aclGetRecentErrMsg()
        finally:
            if ws_ptr:
                c.aclrtFree(ws_ptr)
        return out


def replay_child(argv: list[str]) -> int:
    """Child process: reads a job (specs file, ops, start positions) and writes one JSON line per call."""
    job = json.loads(Path(argv[0]).read_text())
    out = open(argv[1], "a", buffering=1)
    if job.get("specs_pickle"):     # the parent's parsed specs (run_calls' `specs`): a fraction of JSON's time
        with open(job["specs_pickle"], "rb") as f:
            specs = pickle.load(f)
    else:
        specs = load_json(job["specs"])["ops"] if job.get("specs") else None
    if specs is None:
        specs = load_json(CORPUS_DIR / SPECS_FILE)["ops"]
    r = Replayer()
    # OP_CORPUS_CALL_TIMEOUT=s (the fuzz command): a call still running after s seconds ends the process
    # with SIGALRM (Python leaves its default action, and C code cannot block it), recorded as a crash
    limit = int(os.environ.get("OP_CORPUS_CALL_TIMEOUT") or 0)
    try:
        for op, indices in job["work"]:
            params = specs[op]["params"]
            calls = specs[op]["calls"]
            for i in indices:
                out.write(json.dumps({"op": op, "i": i, "start": 1}) + "\n")
                if limit:
                    signal.alarm(limit)
                res = r.run(op, params, calls[i])
                if limit:
                    signal.alarm(0)
                out.write(json.dumps({"op": op, "i": i, "r": res}, separators=(",", ":")) + "\n")
    finally:
        out.flush()
        r.close()
    return 0


def child_env(soc: str) -> dict:
    # Every emulator switch goes (PYACLNN_STUB_ARNQ_* and PYACLNN_STUB_AMP_* change results on
    # purpose, POISON / HAZARDS / DEVICE_MEMORY / device counts behaviour); PYACLNN_STUB_LIBDIR stays:
    # it picks the build under test.
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("PYACLNN_STUB_") and k != "PYACLNN_STUB_LIBDIR") and k != "ASCEND_RT_VISIBLE_DEVICES"}
    env["PYACLNN_STUB_SOC"] = soc
    env["PYACLNN_BACKEND"] = "stub"
    # Kernels spread even these small inputs over 3 threads (PYACLNN_CORPUS_THREADS), so the replay also
    # shows that no result depends on the thread count (the baseline was recorded with one).
    env["PYACLNN_STUB_KERNEL_THREADS"] = os.environ.get("PYACLNN_CORPUS_THREADS", "3")
    # The matmul family (mm, bmm, addmm, convolutions ...) through the portable loop: bit-identical on every
    # CPU, as recorded; the default engine (OpenBLAS) picks its kernels and summation order for the host CPU.
    env["PYACLNN_STUB_MATMUL"] = "portable"
    paths = [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def run_calls(soc: str, work: list, specs_path: str | None = None, timeout: float = 1800,
              crash_log: list | None = None, specs: dict | None = None) -> dict:
    """Runs [(op, [indices])] on `soc` in child processes; returns {(op, i): result}. A call that kills the
    child is recorded as {"crash": returncode} and the work goes on after it in a new child. With a
    `crash_log` list, a child that runs longer than `timeout` seconds is killed and its current call
    recorded as {"crash": "timeout"} (otherwise subprocess.TimeoutExpired propagates), and each crash
    appends (soc, (op, i), returncode, the end of the child's stderr) to it. `specs`: the specs the caller
    has already parsed (instead of `specs_path`); the children get them pickled (parsing the 29 MB corpus
    JSON takes each child seconds)."""
    results: dict = {}
    remaining = [(op, list(ix)) for op, ix in work if ix]
    with tempfile.TemporaryDirectory(prefix="op-corpus-") as tmp:
        pickled = None
        if specs is not None:
            pickled = Path(tmp) / "specs.pickle"
            with open(pickled, "wb") as f:
                pickle.dump({op: specs["ops"][op] for op, _ in remaining}, f, protocol=pickle.HIGHEST_PROTOCOL)
        while remaining:
            job = Path(tmp) / "job.json"
            job.write_text(json.dumps({"specs": specs_path, "specs_pickle": pickled and str(pickled),
                                       "work": remaining}))
            out = Path(tmp) / "out.jsonl"
            out.write_text("")
            try:
                proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "_child", str(job), str(out)],
                                      env=child_env(soc), capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                if crash_log is None:
                    raise
                err = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
                proc = subprocess.CompletedProcess(exc.cmd, "timeout", "", err)
            started = None
            for line in out.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    break
                if "r" in rec:
                    results[(rec["op"], rec["i"])] = rec["r"]
                    started = None
                else:
                    started = (rec["op"], rec["i"])
            if proc.returncode == 0:
                break
            if started is None and crash_log is not None:
                crash_log.append((soc, None, proc.returncode, proc.stderr[-6000:]))
                break
            if started is None:
                raise RuntimeError(f"replay child failed outside a call (exit {proc.returncode}):\n"
                                   f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            results[started] = {"crash": proc.returncode}
            if crash_log is not None:
                crash_log.append((soc, started, proc.returncode, proc.stderr[-6000:]))
            if os.environ.get("OP_CORPUS_VERBOSE"):
                print(f"{soc}: {started} killed the replay process ({proc.returncode}):\n{proc.stderr[-4000:]}",
                      file=sys.stderr)
            rest = []
            for op, ix in remaining:
                ix = [i for i in ix if (op, i) not in results]
                if ix:
                    rest.append((op, ix))
            remaining = rest
    return results


# ---- storage ----------------------------------------------------------------------------------------

def load_json(path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=1)
def corpus_specs() -> dict:
    """The recorded corpus's specs (SPECS_FILE), parsed once per process: read-only for its callers (the
    replay test and the memory-safety tests share one parse; each takes seconds)."""
    return load_json(CORPUS_DIR / SPECS_FILE)


def save_json(path, data) -> None:
    text = json.dumps(data, separators=(",", ":"), sort_keys=False)
    # mtime=0: the same content gives the same file bytes
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
        f.write(text.encode("utf-8"))


def results_file(soc: str) -> Path:
    return CORPUS_DIR / f"results-{soc}.json.gz"


# ---- generation -------------------------------------------------------------------------------------

def catalog() -> dict:
    """The operator catalog of the build under test (ops.json next to its libopapi.so: signatures,
    and family per operator defined in native_stubs/src/ops/<family>/*.toml)."""
    return json.loads((Path(libopapi_path()).parent / "ops.json").read_text())


def registry_params() -> dict:
    """Parameter lists of the operators, from the signature registry of the emulator's catalog (ops.json next to
    the libopapi.so in use, which the build derives from the operator definitions; generation time only)."""
    data = catalog()["signatures"]["ops"]
    return {name: [[p["name"], p["kind"], p["ctype"], p["role"], bool(p["optional"])] for p in op["params"]]
            for name, op in data.items()}


def libopapi_path() -> str:
    """Path of the libopapi.so pyaclnn loads (asked in a child: the parent never initialises ACL)."""
    code = f"import sys\nsys.path.insert(0, {str(HERE)!r})\nimport op_corpus\nprint(op_corpus.find_libopapi())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(SOCS[0]),
                          check=True)
    return proc.stdout.strip()


def exported_operators() -> list[str]:
    """Every aclnnXxx whose aclnnXxxGetWorkspaceSize and aclnnXxx libopapi.so exports (nm -D)."""
    out = subprocess.run(["nm", "-D", "--defined-only", libopapi_path()], capture_output=True, text=True,
                         check=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return sorted(n[:-len("GetWorkspaceSize")] for n in names
                  if n.startswith("aclnn") and n.endswith("GetWorkspaceSize") and n[:-len("GetWorkspaceSize")] in names)


class Gen:
    """Random building blocks of one operator's calls (its own seeded RNG)."""

    def __init__(self, op: str, params: list, salt: int = 0):
        """`salt` 0: the corpus's own stream (crc32 of the name); another salt: another stream of calls
        (the fuzz command's --seed), with other fill seeds."""
        self.op = op
        self.params = params
        self.inp = [p for p in params if p[1] not in ("workspace_size", "executor")]
        base = zlib.crc32(op.encode())
        self.salt = salt
        self.rng = random.Random(base if not salt else f"{base}/{salt}")
        self.seed_base = (base + salt * 2 ** 32) * 100000
        self.n_seed = 0

    def seed(self) -> int:
        self.n_seed += 1
        return self.seed_base + self.n_seed

    # -- dtypes, shapes --
    def dtype(self, pool=None) -> int:
        r = self.rng
        if pool is not None:
            return r.choice(pool)
        x = r.random()
        if x < 0.55:
            return r.choice((0, 0, 1, 1, 27, 11))
        if x < 0.85:
            return r.choice((2, 3, 9, 4, 6, 12))
        if x < 0.93:
            return r.choice((7, 8, 10, 16))
        return r.choice(EXOTIC)

    def pdtype(self, p=0.8) -> int:
        """A dtype from the operator's hint pool (POOLS) most of the time, else any."""
        pool = POOLS.get(_base_op(self.op))
        if pool and self.rng.random() < p:
            return self.rng.choice(pool)
        return self.dtype()

    def dim(self, zero=0.04) -> int:
        r = self.rng
        if r.random() < zero:
            return 0
        return r.choice((1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 16))

    def shape(self, rank=None, zero=0.04, lo=0, hi=4) -> list:
        r = self.rng
        if rank is None:
            rank = r.choice(list(range(lo, hi + 1)) + [max(lo, min(hi, 2))] * 2)
        return [self.dim(zero) for _ in range(rank)]

    def bcast(self, shape: list, p=0.35) -> list:
        """A shape that broadcasts to `shape` (sometimes `shape` itself)."""
        r = self.rng
        if r.random() > p:
            return list(shape)
        s = [1 if r.random() < 0.4 else d for d in shape]
        drop = r.randrange(len(s) + 1) if s and r.random() < 0.4 else 0
        return s[drop:]

    # -- fills --
    def fill(self, dtype: int, kind="any") -> dict:
        r = self.rng
        s = self.seed()
        if dtype not in NP_FLOAT and dtype not in NP_INT and dtype != 27:
            return {"m": "raw", "s": s}
        if kind == "any":
            x = r.random()
            kind = "raw" if x < 0.12 else "small" if x < 0.45 else "normal"
        if kind == "raw":
            return {"m": "raw", "s": s}
        if dtype == 12:
            return {"m": "int", "s": s, "lo": 0, "hi": 2}
        if kind == "small":
            if dtype in (4, 7, 8, 10):
                return {"m": "int", "s": s, "lo": 0, "hi": r.choice((3, 5, 10, 100))}
            return {"m": "int", "s": s, "lo": -r.choice((2, 4, 8)), "hi": r.choice((3, 5, 9))}
        if kind == "pos":
            if dtype in NP_INT:
                return {"m": "int", "s": s, "lo": 1, "hi": 9}
            return {"m": "uni", "s": s, "lo": 0.05, "hi": r.choice((1.0, 4.0))}
        if dtype in NP_INT:
            if dtype in (4, 7, 8, 10):
                return {"m": "int", "s": s, "lo": 0, "hi": 120}
            return {"m": "int", "s": s, "lo": -50, "hi": 50}
        a = r.choice((1.0, 3.0, 3.0, 10.0, 1000.0))
        return {"m": "uni", "s": s, "lo": -a, "hi": a}

    def tensor(self, dtype: int, shape: list, *, out=False, fill=None, layout=None, fmt=ND) -> dict:
        """A tensor spec; inputs get a strided / offset layout sometimes."""
        r = self.rng
        shape = list(shape)
        strides = None
        offset = 0
        if layout is None:
            layout = r.random() < (0.08 if out else 0.25)
        if layout and shape:
            base = _contig(shape)
            choice = r.randrange(4)
            if choice == 0 and len(shape) >= 2:            # transposed storage
                perm = list(range(len(shape)))
                a, b = len(shape) - 1, len(shape) - 2
                perm[a], perm[b] = perm[b], perm[a]
                pshape = [shape[k] for k in perm]
                pst = _contig(pshape)
                strides = [0] * len(shape)
                for k, pk in enumerate(perm):
                    strides[pk] = pst[k]
            elif choice == 1:                                # every other element
                k = r.randrange(len(shape))
                strides = [s * 2 if j <= k else s for j, s in enumerate(base)]
            elif choice == 2 and not out:                    # broadcast along one dimension
                k = r.randrange(len(shape))
                strides = list(base)
                strides[k] = 0
            else:
                strides = base
            offset = r.choice((0, 1, 3, 7))
        elif layout:
            offset = r.choice((1, 5))
        n = _extent(shape, strides, offset) * ITEMSIZE[dtype]
        n += r.choice((0, 0, 0, ITEMSIZE[dtype], 8))
        spec = {"d": dtype, "sh": shape}
        if strides is not None:
            spec["st"] = strides
        if offset:
            spec["o"] = offset
        if strides is not None or offset:
            spec["ss"] = [_extent(shape, strides, offset)]
        if fmt != ND:
            spec["f"] = fmt
        spec["n"] = max(n, 1)
        spec["fill"] = {"m": "pat", "b": 0xA5} if out and fill is None else (fill or self.fill(dtype))
        return spec

    def out(self, dtype, shape, **kw) -> dict:
        return self.tensor(dtype, shape, out=True, **kw)

    # -- scalars and attributes --
    def scalar(self, dtype=None, value=None) -> dict:
        r = self.rng
        if dtype is None:
            dtype = r.choice((0, 0, 0, 1, 27, 11, 11, 9, 3, 2, 12, 4)) if r.random() < 0.95 else r.choice(EXOTIC)
        if value is None:
            x = r.random()
            if x < 0.08:
                value = r.choice((math.nan, math.inf, -math.inf))
            elif x < 0.2:
                value = r.choice((0.0, -0.0, 1.0, -1.0))
            elif x < 0.6:
                value = float(r.randint(-5, 5))
            else:
                value = round(r.uniform(-4, 4), 3)
        if dtype in NP_FLOAT or dtype == 27 or dtype in NP_INT:
            raw = encode_values(np.array([value], np.float64), dtype)
        else:
            raw = bytes([r.randrange(256)]) * ITEMSIZE.get(dtype, 1)
        return {"d": dtype, "b": raw.hex()}

    def double(self) -> float:
        r = self.rng
        return r.choice((0.0, 1e-5, 1e-6, 0.5, 1.0, 2.0, -1.0, math.nan, math.inf, 1e-12, 0.1))

    def int_(self) -> int:
        r = self.rng
        return r.choice((0, 1, -1, 2, 3, -2, 7, 100, -100, 2 ** 31, -(2 ** 63), 2 ** 63 - 1))


def _contig(shape: list) -> list:
    st, step = [0] * len(shape), 1
    for k in range(len(shape) - 1, -1, -1):
        st[k] = step
        step *= max(shape[k], 1)
    return st


def _extent(shape: list, strides, offset: int) -> int:
    if any(d == 0 for d in shape):
        return offset
    strides = strides if strides is not None else _contig(shape)
    return offset + sum((d - 1) * abs(s) for d, s in zip(shape, strides)) + 1


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# ---- per-operator builders: plausible VALID arguments by parameter name ------------------------------
# A builder(g) returns {param name: spec}; parameters it leaves out get a generic value.

CMP = {"Eq", "Ne", "Gt", "Ge", "Lt", "Le"}

# Hints: the dtypes an operator's main input supports (by name without aclnn / Inplace); valid calls
# draw from them most of the time, so that enough of them pass phase 1.
F4, F3 = (0, 1, 27, 11), (0, 1, 27)
POOLS = {
    "Ceil": F4, "Cos": F4, "Sin": F4, "Sqrt": F4, "Rsqrt": F4, "Reciprocal": F4, "Sigmoid": F4,
    "SigmoidBackward": F4, "Exp": F4 + (12, 9), "Silu": F3, "SiluBackward": F3, "GeluV2": F3,
    "GeluBackwardV2": F3, "Lerps": F3, "BitwiseAndScalar": (2, 3, 4, 6, 9, 12), "BitwiseAndTensor": (2, 3, 4, 6, 9, 12),
    "Addcdiv": (0, 9, 1, 11, 27), "Addcmul": (0, 3, 9, 1, 2, 4, 11, 27), "Neg": (2, 3, 9, 1, 0, 11, 27),
    "Relu": (0, 1, 2, 4, 3, 9, 27), "ThresholdBackward": (0, 3, 1, 2, 4, 27), "MaxDim": (0, 1, 9, 12, 27, 3),
    "MinDim": (0, 1, 9, 12, 27, 3), "Softmax": F4, "LogSoftmax": F4, "SoftmaxBackward": F3,
    "LogSoftmaxBackward": F3, "Matmul": F3, "Mm": F3, "BatchMatMul": F3, "Addmm": F3, "LayerNorm": F3,
    "LayerNormBackward": F3, "DropoutDoMask": F3, "DropoutV3": F3, "EmbeddingDenseBackward": F3,
    "ForeachAddScalarV2": F3 + (3,), "ForeachMulScalarV2": F3 + (3,), "ForeachAddcmulScalarV2": F3 + (3,),
    "ForeachAddcdivScalarList": F3, "ForeachDivScalarList": F3, "ForeachLerpScalar": F3, "ForeachSqrt": F3, "ForeachNorm": F3,
    "NonzeroV2": (0, 1, 2, 4, 6, 3, 9, 11, 12), "Mean": (0, 3, 9, 1, 6, 2, 4, 11, 27),
}
# the logical family's integer operators and the activations' backwards (few valid calls from any dtype)
POOLS.update({"BitwiseNot": (2, 3, 4, 6, 9, 12), "BitwiseOrScalar": (2, 3, 4, 6, 9, 12),
              "BitwiseXorScalar": (2, 3, 4, 6, 9, 12), "LeftShift": (2, 3, 4, 6, 9), "LeftShifts": (2, 3, 4, 6, 9),
              "RightShift": (2, 3, 4, 6, 9), "EluBackward": F3})


def _base_op(op: str) -> str:
    name = op[5:]
    if name.startswith("Inplace"):
        name = name[7:]
    return name


def build_elementwise(g: Gen) -> dict:
    """Tensors with one dtype and broadcast-compatible shapes; outputs of the broadcast shape."""
    r = g.rng
    name = _base_op(g.op)
    cmp = name.endswith(("Scalar", "Tensor")) and name[:2] in CMP
    shape = g.shape()
    dt = g.pdtype()
    args = {}
    ins = [p for p in g.inp if p[1] == "tensor" and p[3] in ("in", "inout")]
    inplace = g.op[5:].startswith("Inplace")
    for k, p in enumerate(ins):
        same = r.random() < 0.85
        d = dt if same else g.dtype()
        if inplace and k == 0:
            args[p[0]] = g.tensor(d, shape, layout=r.random() < 0.15)
        else:
            args[p[0]] = g.tensor(d, g.bcast(shape))
    for p in g.inp:
        if p[1] == "tensor" and p[3] == "out":
            d = dt
            if cmp or name in ("IsFinite", "IsNegInf", "IsPosInf", "Signbit"):
                d = 12 if r.random() < 0.7 else dt
            elif r.random() < 0.1:
                d = g.dtype()
            args[p[0]] = g.out(d, shape)
        elif p[1] == "scalar":
            sd = dt if r.random() < 0.5 and dt in (0, 1, 27, 11, 2, 3, 9, 4, 6, 12) else None
            args[p[0]] = g.scalar(sd)
    x = r.random()
    if ins and x < 0.16 and not inplace:       # out aliases the first input: same handle, or same memory
        o = [p for p in g.inp if p[1] == "tensor" and p[3] == "out"]
        if len(o) == 1:
            first = g.inp.index(ins[0])
            args[ins[0][0]] = g.tensor(dt, shape, layout=False)
            args[o[0][0]] = {"same": first} if x < 0.1 else {"d": dt, "sh": list(shape), "as": first}
    if inplace and len(ins) >= 2 and r.random() < 0.1:    # the other operand is selfRef itself
        args[ins[1][0]] = {"same": 0}
    return args


def build_divmod(g: Gen) -> dict:
    args = build_elementwise(g)
    args["mode"] = g.rng.choice((0, 1, 2, 2))
    return args


def build_cast(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    src = g.dtype()
    dst = g.dtype()
    return {"self": g.tensor(src, shape), "dtype": dst, "out": g.out(dst if r.random() < 0.9 else g.dtype(), shape)}


def build_gelu(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.pdtype()
    return {"x": g.tensor(dt, shape), "approximate": r.choice((0, 1, 0, 1, 2)), "y": g.out(dt, shape)}


def build_gelu_backward(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.pdtype()
    return {"gradOutput": g.tensor(dt, g.bcast(shape)), "self": g.tensor(dt, shape),
            "approximate": r.choice(("none", "tanh", "none", "tanh", "None", "erf", "")),
            "gradInput": g.out(dt, shape)}


def build_triu(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1 if r.random() < 0.9 else 0)
    if r.random() < 0.7 and len(shape) < 2:
        shape = g.shape(lo=2, hi=4)
    dt = g.dtype()
    args = {("selfRef" if "Inplace" in g.op else "self"): g.tensor(dt, shape),
            "diagonal": r.choice((0, 0, 1, -1, 2, -3, 5, -100))}
    if "out" in [p[0] for p in g.inp]:
        args["out"] = g.out(dt, shape)
    return args


def _reduce_shape(shape, dims, keep):
    nd = len(shape)
    norm = set()
    for d in dims:
        norm.add(d + nd if d < 0 else d)
    if not dims:
        norm = set(range(nd))
    return [1 if k in norm else s for k, s in enumerate(shape) if keep or k not in norm]


def _pick_dims(g: Gen, nd: int, maxn=None) -> list:
    r = g.rng
    if nd == 0:
        return r.choice(([], [0], [-1]))
    k = r.randint(0, min(nd, maxn or nd))
    dims = r.sample(range(nd), k)
    return [d - nd if r.random() < 0.3 else d for d in dims]


def build_reduce_dims(g: Gen) -> dict:
    """Amax / ReduceSum / Mean: self, dim(s) int array, keep, [dtype], out."""
    r = g.rng
    shape = g.shape(zero=0.03)
    dt = g.dtype()
    names = [p[0] for p in g.inp]
    dim_name = "dims" if "dims" in names else "dim"
    keep_name = "keepDims" if "keepDims" in names else "keepDim"
    dims = _pick_dims(g, len(shape))
    keep = r.random() < 0.5
    args = {"self": g.tensor(dt, shape), dim_name: {"ia": dims}, keep_name: keep}
    od = dt
    if "dtype" in names:
        od = dt if r.random() < 0.6 else g.dtype()
        args["dtype"] = od
    args["out"] = g.out(od, _reduce_shape(shape, dims, keep))
    return args


def build_max_all(g: Gen) -> dict:
    dt = g.dtype()
    return {"self": g.tensor(dt, g.shape()), "out": g.out(dt, [] if g.rng.random() < 0.8 else [1])}


def build_dim_reduce(g: Gen) -> dict:
    """MaxDim / MinDim / ArgMax: self, dim, keepdim, out(s)."""
    r = g.rng
    shape = g.shape(zero=0.03)
    dt = g.dtype()
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    keep = r.random() < 0.5
    oshape = _reduce_shape(shape, [dim], keep) if nd else []
    args = {"self": g.tensor(dt, shape), "dim": dim, "keepdim": keep}
    if "indices" in [p[0] for p in g.inp]:
        args["out"] = g.out(dt, oshape)
        args["indices"] = g.out(9 if r.random() < 0.85 else 3, oshape)
    else:
        args["out"] = g.out(9 if r.random() < 0.8 else 3, oshape)
    return args


def build_softmax(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.pdtype()
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    if r.random() < 0.05:
        dim = r.choice((nd, -nd - 1, 100))
    if "Backward" in g.op:
        return {"gradOutput": g.tensor(dt, shape), "output": g.tensor(dt, shape), "dim": dim,
                "out": g.out(dt, shape)}
    return {"self": g.tensor(dt, shape), "dim": dim, "out": g.out(dt if r.random() < 0.9 else g.dtype(), shape)}


def build_cumsum(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    od = dt if r.random() < 0.6 else g.dtype((0, 1, 27, 11, 3, 9))
    return {"self": g.tensor(dt, shape), "dim": dim, "dtype": od, "out": g.out(od, shape)}


def build_topk(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(zero=0.02)
    dt = g.dtype((0, 1, 27, 11, 3, 9, 2, 4, 6, 0, 1))
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    size = shape[dim] if nd else 1
    k = r.randint(0, size) if r.random() < 0.9 else r.choice((-1, size + 1))
    oshape = list(shape)
    if nd:
        oshape[dim] = max(k, 0)
    return {"self": g.tensor(dt, shape, fill=g.fill(dt, r.choice(("small", "normal", "raw")))), "k": k, "dim": dim,
            "largest": r.random() < 0.6, "sorted": r.random() < 0.7,
            "valuesOut": g.out(dt, oshape), "indicesOut": g.out(9 if r.random() < 0.9 else 3, oshape)}


def _matmul_shapes(g: Gen, op: str):
    r = g.rng
    m, k, n = (r.choice((1, 2, 3, 4, 5, 8, 16, 0 if r.random() < 0.05 else 7)) for _ in range(3))
    if op in ("aclnnMm", "aclnnAddmm", "aclnnInplaceAddmm"):
        return [m, k], [k, n], [m, n]
    if op == "aclnnBatchMatMul":
        b = r.choice((1, 2, 3))
        return [b, m, k], [b, k, n], [b, m, n]
    # Matmul: 1-d to 4-d with batch broadcasting
    ra, rb = r.choice((1, 2, 2, 3, 4)), r.choice((1, 2, 2, 3))
    batch = [r.choice((1, 2, 3)) for _ in range(max(ra, rb) - 2)] if max(ra, rb) > 2 else []
    a = ([m, k] if ra >= 2 else [k])
    b = ([k, n] if rb >= 2 else [k])
    a = batch[len(batch) - (ra - 2):] + a if ra > 2 else a
    b = batch[len(batch) - (rb - 2):] + b if rb > 2 else b
    ob = batch if max(ra, rb) > 2 else []
    if ra >= 2 and rb >= 2:
        o = ob + [m, n]
    elif ra >= 2:
        o = ob + [m]
    elif rb >= 2:
        o = ob + [n]
    else:
        o = []
    return a, b, o


def build_matmul(g: Gen) -> dict:
    r = g.rng
    a, b, o = _matmul_shapes(g, g.op)
    dt = g.pdtype()
    args = {"mat2": g.tensor(dt, b, fill=g.fill(dt, r.choice(("small", "normal"))))}
    names = [p[0] for p in g.inp]
    if "mat1" in names:       # Addmm
        args["mat1"] = g.tensor(dt, a, fill=g.fill(dt, r.choice(("small", "normal"))))
        key = "selfRef" if "selfRef" in names else "self"
        args[key] = g.tensor(dt, o if "Inplace" in g.op else g.bcast(o))
        args["beta"] = g.scalar(r.choice((0, 0, 11, 1, 9)))
        args["alpha"] = g.scalar(r.choice((0, 0, 11, 1, 9)))
    else:
        args["self"] = g.tensor(dt, a, fill=g.fill(dt, r.choice(("small", "normal"))))
    if "out" in names:
        args["out"] = g.out(dt if r.random() < 0.9 else g.dtype(), o)
    args["cubeMathType"] = r.choice((0, 1, 1, 2, 3, 0))
    return args


def build_cat_stack(g: Gen) -> dict:
    r = g.rng
    stack = "Stack" in g.op
    shape = g.shape(lo=0 if stack else 1)
    nd = len(shape)
    count = r.choice((1, 2, 2, 3, 4, 0 if r.random() < 0.1 else 2))
    dt = g.dtype()
    if stack:
        dim = r.randrange(-nd - 1, nd + 1)
        items = [g.tensor(dt if r.random() < 0.9 else g.dtype(), shape) for _ in range(count)]
        d = dim + nd + 1 if dim < 0 else dim
        oshape = shape[:d] + [count] + shape[d:]
    else:
        dim = r.randrange(-nd, nd) if nd else 0
        d = dim + nd if dim < 0 else dim
        sizes = [r.choice((0, 1, 2, 3)) for _ in range(count)]
        items = []
        for s in sizes:
            sh = list(shape)
            if nd:
                sh[d] = s
            items.append(g.tensor(dt if r.random() < 0.9 else g.dtype(), sh))
        oshape = list(shape)
        if nd:
            oshape[d] = sum(sizes)
    return {"tensors": {"list": items}, "dim": dim, "out": g.out(dt, oshape)}


def build_permute(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    nd = len(shape)
    perm = list(range(nd))
    r.shuffle(perm)
    dims = [p - nd if r.random() < 0.2 else p for p in perm]
    dt = g.dtype()
    return {"self": g.tensor(dt, shape), "dims": {"ia": dims}, "out": g.out(dt, [shape[p] for p in perm])}


def build_arange(g: Gen) -> dict:
    r = g.rng
    dt = g.dtype((0, 1, 27, 11, 3, 9, 0, 9, 3))
    start = r.choice((0, 0, 1, -3, 2.5, -1.5))
    step = r.choice((1, 1, 2, 0.5, -1, -2, 0.25, 3))
    n = r.randint(0, 12)
    end = start + step * n
    if dt in INTS or dt in ALL_INTS:
        start, end, step = int(start), int(end), int(step) or 1
        n = max(0, math.ceil((end - start) / step))
    sdt = r.choice((0, 9, 11, 3)) if r.random() < 0.8 else g.dtype()
    count = n if r.random() < 0.85 else n + r.choice((-1, 1))
    return {"start": g.scalar(sdt, float(start)), "end": g.scalar(sdt, float(end)), "step": g.scalar(sdt, float(step)),
            "out": g.out(dt, [max(count, 0)])}


def build_index_select(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    dim = r.randrange(-nd, nd)
    size = shape[dim]
    n = r.randint(0, 6)
    dt = g.dtype()
    idt = r.choice((9, 3, 9, 3, 2))
    ish = [n] if r.random() < 0.85 else ([] if n == 1 else [n])
    fill = {"m": "int", "s": g.seed(), "lo": -size if r.random() < 0.2 else 0, "hi": max(size, 1)}
    oshape = list(shape)
    oshape[dim] = _numel(ish)
    return {"self": g.tensor(dt, shape), "dim": dim, "index": g.tensor(idt, ish, fill=fill), "out": g.out(dt, oshape)}


def build_embedding(g: Gen) -> dict:
    r = g.rng
    nw, ed = r.randint(1, 9), r.randint(1, 8)
    ish = g.shape(lo=0, hi=3)
    dt = g.dtype()
    idt = r.choice((9, 3, 9, 3, 2))
    fill = {"m": "int", "s": g.seed(), "lo": 0, "hi": nw + (1 if r.random() < 0.1 else 0)}
    return {"weight": g.tensor(dt, [nw, ed]), "indices": g.tensor(idt, ish, fill=fill), "out": g.out(dt, ish + [ed])}


def build_embedding_backward(g: Gen) -> dict:
    r = g.rng
    nw, ed = r.randint(1, 9), r.randint(1, 8)
    ish = g.shape(lo=0, hi=3)
    dt = g.pdtype()
    idt = r.choice((9, 3, 9, 3))
    fill = {"m": "int", "s": g.seed(), "lo": 0, "hi": nw}
    pad = r.choice((nw - 1, 0, 2 ** 64 - 1, 2 ** 64 - 1, nw + 5))
    return {"grad": g.tensor(dt, ish + [ed]), "indices": g.tensor(idt, ish, fill=fill), "numWeights": nw,
            "paddingIdx": pad, "scaleGradByFreq": r.random() < 0.4, "out": g.out(dt, [nw, ed])}


def _index_tensor(g: Gen, size: int, shape: list) -> dict:
    r = g.rng
    if r.random() < 0.15:      # a boolean mask over the dimension
        return g.tensor(r.choice((12, 4)), [size], fill={"m": "int", "s": g.seed(), "lo": 0, "hi": 2})
    idt = r.choice((9, 3, 9, 3))
    return g.tensor(idt, shape, fill={"m": "int", "s": g.seed(), "lo": -size if r.random() < 0.3 else 0,
                                      "hi": max(size, 1)})


def build_index(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    k = r.randint(1, nd)
    ish = g.shape(lo=1, hi=2, zero=0)
    idx = [_index_tensor(g, shape[j], ish) for j in range(k)]
    dt = g.dtype()
    oshape = ish + shape[k:]
    if any(t["d"] in (12, 4) for t in idx):
        oshape = [r.randint(0, 4)] + shape[k:]      # data-dependent: phase 1 may accept any size
    return {"self": g.tensor(dt, shape), "indices": {"list": idx}, "out": g.out(dt, oshape)}


def build_index_put(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    k = r.randint(1, nd)
    ish = g.shape(lo=1, hi=2, zero=0)
    idx = [_index_tensor(g, shape[j], ish) for j in range(k)]
    dt = g.dtype()
    vshape = g.bcast(ish + shape[k:], p=0.5)
    return {"selfRef": g.tensor(dt, shape), "indices": {"list": idx},
            "values": g.tensor(dt if r.random() < 0.9 else g.dtype(), vshape),
            "accumulate": r.random() < 0.5, "unsafe": r.random() < 0.3}


def build_masked_select(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    mask = g.tensor(12 if r.random() < 0.85 else g.dtype(), g.bcast(shape), fill={"m": "int", "s": g.seed(),
                                                                                   "lo": 0, "hi": 2})
    n = _numel(shape)
    return {"self": g.tensor(dt, g.bcast(shape)), "mask": mask,
            "out": g.out(dt, [n] if r.random() < 0.8 else [r.randint(0, n + 2)])}


def build_masked_fill(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    mask = g.tensor(12 if r.random() < 0.85 else g.dtype(), g.bcast(shape), fill={"m": "int", "s": g.seed(),
                                                                                   "lo": 0, "hi": 2})
    return {"selfRef": g.tensor(dt, shape), "mask": mask, "value": g.scalar()}


def build_where(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    cond = g.tensor(12 if r.random() < 0.85 else g.dtype(), g.bcast(shape), fill={"m": "int", "s": g.seed(),
                                                                                   "lo": 0, "hi": 2})
    return {"condition": cond, "self": g.tensor(dt, g.bcast(shape)),
            "other": g.tensor(dt if r.random() < 0.85 else g.dtype(), g.bcast(shape)), "out": g.out(dt, shape)}


def build_nonzero(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    nd = len(shape)
    n = _numel(shape)
    fill = g.fill(dt, "small") if r.random() < 0.7 else g.fill(dt)
    return {"self": g.tensor(dt, shape, fill=fill),
            "out": g.out(9 if r.random() < 0.85 else 3, [nd, n] if r.random() < 0.85 else [n, nd])}


def build_layer_norm(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    k = r.randint(0, min(nd, 2))
    ns = shape[nd - k:]
    dt = g.pdtype()
    wd = dt if r.random() < 0.8 else 0
    stat = shape[:nd - k] + [1] * k
    args = {"input": g.tensor(dt, shape), "normalizedShape": {"ia": ns},
            "weightOptional": g.tensor(wd, ns) if r.random() < 0.7 else None,
            "biasOptional": g.tensor(wd, ns) if r.random() < 0.6 else None,
            "eps": r.choice((1e-5, 1e-6, 1e-12, 0.0, 0.1))}
    if "Backward" in g.op:
        sdt = r.choice((0, 0, dt))
        args.update({"gradOut": g.tensor(dt, shape), "mean": g.tensor(sdt, stat),
                     "rstd": g.tensor(sdt, stat, fill=g.fill(sdt, "pos")),
                     "outputMask": {"ba": [r.random() < 0.8, r.random() < 0.6, r.random() < 0.6]},
                     "gradInputOut": g.out(dt, shape),
                     "gradWeightOut": g.out(wd, ns) if r.random() < 0.9 else None,
                     "gradBiasOut": g.out(wd, ns) if r.random() < 0.9 else None})
        args.pop("eps")
        return args
    sdt = dt if r.random() < 0.5 else 0
    args.update({"out": g.out(dt, shape),
                 "meanOutOptional": g.out(sdt, stat) if r.random() < 0.6 else None,
                 "rstdOutOptional": g.out(sdt, stat) if r.random() < 0.6 else None})
    return args


def build_nll(g: Gen) -> dict:
    r = g.rng
    n, c = r.randint(1, 6), r.randint(1, 6)
    oned = r.random() < 0.15
    xs = [c] if oned else [n, c]
    ts = [] if oned else [n]
    dt = g.dtype((0, 0, 1, 27, 0))
    red = r.choice((0, 1, 2, 1))
    ign = r.choice((-100, -100, 0, 1))
    tfill = {"m": "int", "s": g.seed(), "lo": 0, "hi": c}
    tdt = r.choice((9, 9, 3, 4))
    wdt = dt if r.random() < 0.9 else 0
    oshape = ts if red == 0 else []
    if "Backward" in g.op:
        return {"gradOutput": g.tensor(dt, oshape), "self": g.tensor(dt, xs), "target": g.tensor(tdt, ts, fill=tfill),
                "weight": g.tensor(wdt, [c], fill=g.fill(wdt, "pos")), "reduction": red, "ignoreIndex": ign,
                "totalWeight": g.tensor(dt, [1], fill=g.fill(dt, "pos")), "out": g.out(dt, xs)}
    return {"self": g.tensor(dt, xs), "target": g.tensor(tdt, ts, fill=tfill),
            "weight": g.tensor(wdt, [c], fill=g.fill(wdt, "pos")), "reduction": red, "ignoreIndex": ign,
            "out": g.out(dt, oshape), "totalWeightOut": g.out(dt, [1])}


def _mask_bytes(n: int) -> int:
    return (n + 127) // 128 * 16


def build_dropout_gen_mask(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=0, hi=3)
    n = _numel(shape)
    return {"shape": {"ia": shape}, "prob": r.choice((0.0, 0.1, 0.5, 0.9, 1.0, 0.3)),
            "seed": r.choice((0, 1, 42, 2 ** 40)), "offset": r.choice((0, 0, 12, 2 ** 33)),
            "probDataType": r.choice((0, 1, 27, 0, 11, 3)),
            "out": g.out(4 if r.random() < 0.9 else 12, [_mask_bytes(n)] if r.random() < 0.9 else [n])}


def build_dropout_do_mask(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.pdtype()
    n = _numel(shape)
    mb = _mask_bytes(n)
    return {"self": g.tensor(dt, shape), "mask": g.tensor(4 if r.random() < 0.9 else 12, [mb], fill=g.fill(4, "raw")),
            "prob": r.choice((0.0, 0.1, 0.5, 0.9, 1.0, 0.25)), "out": g.out(dt, shape)}


def build_dropout_v3(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.pdtype()
    n = _numel(shape)
    x = g.tensor(dt, shape)
    noise = None if r.random() < 0.95 else g.tensor(9, [len(shape)])
    return {"input": x, "optionalNoiseShape": noise,
            "p": r.choice((0.0, 0.1, 0.5, 0.9, 1.0, 0.4)), "seed": r.choice((0, 1, 77, 2 ** 40)),
            "offset": r.choice((0, 12, 2 ** 33)), "out": g.out(dt, shape),
            "maskOut": g.out(4 if r.random() < 0.9 else 12, [_mask_bytes(n)])}


def build_random(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype((0, 1, 27, 0, 1, 27, 11, 3))
    args = {"selfRef": g.tensor(dt, shape), "seed": r.choice((0, 1, 5, 2 ** 40)),
            "offset": r.choice((0, 0, 8, 2 ** 33))}
    if "Uniform" in g.op:
        lo = r.choice((0.0, -1.0, 2.0, 0.0))
        args.update({"from": lo, "to": lo + r.choice((1.0, 0.5, 10.0, 0.0, -1.0))})
    else:
        args.update({"mean": r.choice((0.0, 1.0, -2.0)), "std": r.choice((1.0, 0.5, 0.0, 2.0, -1.0))})
    return args


def build_foreach(g: Gen) -> dict:
    r = g.rng
    count = r.choice((1, 2, 3, 3, 4, 0 if r.random() < 0.1 else 2))
    dt = g.pdtype()
    shapes = [g.shape(lo=0, hi=3) for _ in range(count)]
    names = [p[0] for p in g.inp]
    pos = "Sqrt" in g.op or "Div" in g.op
    args = {}
    for nm in names:
        p = next(q for q in g.inp if q[0] == nm)
        if p[1] == "tensor_list":
            args[nm] = {"list": [g.tensor(dt if r.random() < 0.95 else g.dtype(), s,
                                          out=p[3] == "out" or nm == "out",
                                          fill=None if nm == "out" else g.fill(dt, "pos" if pos else "any"))
                                 for s in shapes]}
    # the scalar dtypes a list of dt takes: FLOAT/BF16 lists FLOAT or DOUBLE, FLOAT16 lists FLOAT16 or
    # DOUBLE (FLOAT too on Ascend 950), INT32 lists INT32 or INT64
    sdts = {0: (0, 11), 27: (0, 11), 1: (1, 11, 0)}.get(dt, (3, 9))
    for nm in names:
        p = next(q for q in g.inp if q[0] == nm)
        if p[1] == "scalar":
            args[nm] = g.scalar(r.choice(sdts) if r.random() < 0.85 else None)
        elif p[1] == "scalar_list":
            args[nm] = {"slist": [g.scalar(r.choice(sdts) if r.random() < 0.9 else None)
                                  for _ in range(count if r.random() < 0.9 else count + 1)]}
        elif p[1] == "tensor" and nm == "scalars":
            args[nm] = g.tensor(r.choice((dt, 0, 0)), [count if r.random() < 0.9 else count + 1])
    if "out" in args and r.random() < 0.1 and "x" in names:
        args["out"] = {"same": names.index("x")}
    return args


def build_amp(g: Gen) -> dict:
    r = g.rng
    sdt = 0 if r.random() < 0.9 else g.dtype()
    tdt = 3 if r.random() < 0.9 else g.dtype()
    shp = [1] if r.random() < 0.9 else r.choice(([], [2]))
    return {"currentScale": g.tensor(sdt, shp, fill={"m": "const", "v": r.choice((65536.0, 1.0, 2.0 ** 24, 0.5))}),
            "growthTracker": g.tensor(tdt, shp, fill={"m": "int", "s": g.seed(), "lo": 0, "hi": 1000}),
            "foundInf": g.tensor(sdt, shp, fill={"m": "const", "v": r.choice((0.0, 1.0, 0.0, math.nan))}),
            "growthFactor": r.choice((2.0, 2.0, 1.5, 1.0, 0.5)), "backoffFactor": r.choice((0.5, 0.5, 0.25, 1.0)),
            "growthInterval": r.choice((1000, 1, 100, 901, 2000, 2 ** 31 - 1)),
            "updatedScaleOut": g.out(sdt, shp), "updatedGrowthTrackerOut": g.out(tdt, shp)}


def build_arnq(g: Gen) -> dict:
    r = g.rng
    v2 = g.op.endswith("V2")
    rows = r.choice((1, 2, 3, 4, 8))
    n = r.choice((8, 16, 32, 64, 7, 128))
    lead = [rows] if r.random() < 0.6 else [2, rows]
    x = lead + [n]
    dt = r.choice((1, 27, 1, 27, 1, 27, 0))
    # int8 / int4 on every SoC; int32 (packed int4), FP8 and HiFloat8 on Ascend 950 only
    ydt = r.choice((2, 2, 2, 2, 29, 29, 3, 35, 36, 34)) if r.random() < 0.95 else g.dtype()
    yshape = list(x)
    if ydt == 3:
        yshape = lead + [n // 8]
    use1, use2 = r.random() < 0.6, r.random() < 0.4
    args = {"x1": g.tensor(dt, x), "x2": g.tensor(dt, x), "gamma": g.tensor(dt, [n], fill=g.fill(dt, "pos")),
            "smoothScale1Optional": g.tensor(dt, [n], fill=g.fill(dt, "pos")) if use1 else None,
            "smoothScale2Optional": g.tensor(dt, [n], fill=g.fill(dt, "pos")) if use1 and use2 else None,
            "epsilon": r.choice((1e-6, 1e-5, 1e-6, 1e-6, 0.1, 0.0)),
            "y1Out": g.out(ydt, yshape), "y2Out": g.out(ydt, yshape if use2 or r.random() < 0.5 else [1]),
            "xOut": g.out(dt, x), "scale1Out": g.out(0, lead), "scale2Out": g.out(0, lead if use2 else [1])}
    if v2:
        args["betaOptional"] = g.tensor(dt, [n]) if r.random() < 0.4 else None
        args["outputMask"] = {"ba": [r.random() < 0.8, r.random() < 0.5]} if r.random() < 0.5 else None
    return args


def build_gmq(g: Gen) -> dict:
    """x [m, n] FLOAT16/BF16, groupIndex INT32 [g] (cumulative row ends), y like x (FP8; FP4 too in V2),
    mxscale FLOAT8_E8M0 [m / 64 + g, n, 2]; roundMode 'rint' (V2 also round / floor with FP4)."""
    r = g.rng
    v2 = g.op.endswith("V2")
    groups = r.choice((1, 2, 3))
    sizes = [r.choice((32, 64, 96, 0, 32, 128, 5)) for _ in range(groups)]
    m = sum(sizes)
    gi = []
    acc = 0
    for sz in sizes:
        acc += sz
        gi.append(acc)
    fp4 = v2 and r.random() < 0.45
    n = r.choice((2, 4, 8, 16, 6)) if fp4 else r.choice((1, 4, 8, 2, 16, 3))
    dt = r.choice((1, 27))
    if fp4:
        ydt = r.choice((40, 41))
        mode = r.choice(("rint", "round", "floor"))
        alg = r.choice((0, 2))
        dmax = r.choice((0.0, 0.0, 6.0, 12.0, 7.5)) if ydt == 40 else r.choice((0.0, 0.0, 1.75, 3.5, 2.0))
    else:
        ydt = r.choice((35, 36))
        mode = "rint" if r.random() < 0.95 else r.choice(("round", "floor"))
        alg = r.choice((0, 0, 1))
        dmax = r.choice((0.0, 0.0, 448.0, 57344.0))
    if r.random() < 0.05:
        ydt = g.dtype()
    xfill = g.fill(dt, r.choice(("normal", "normal", "raw", "small")))
    args = {"x": g.tensor(dt, [m, n], fill=xfill, layout=r.random() < 0.1),
            "groupIndex": g.tensor(3, [groups], fill={"m": "list", "v": gi}, layout=False),
            "roundMode": mode, "dstType": ydt if r.random() < 0.97 else g.int_(),
            "blocksize": 32 if r.random() < 0.95 else r.choice((16, 64)),
            "y": g.out(ydt, [m, n], layout=False), "mxscale": g.out(37, [m // 64 + groups, n, 2], layout=False)}
    if v2:
        args["scaleAlg"] = alg
        args["dstTypeMax"] = dmax
    return args


def build_flash_attention(g: Gen) -> dict:
    """FlashAttentionScore* / *ScoreGrad*: q/k/v in a layout the version takes (TND with actual sequence lengths
    where it has them), GQA, sometimes the causal compressed mask, a pse, dropout (V4: seed/offset)."""
    r = g.rng
    names = {p[0] for p in g.inp}
    tnd = "actualSeqQLenOptional" in names and (r.random() < 0.6 or "VarLen" in g.op or "Unpadding" in g.op)
    layout = "TND" if tnd else r.choice(("BSH", "SBH", "BSND", "BNSD"))
    dt = r.choice((0, 1, 27, 0, 1, 27, 11)) if r.random() < 0.95 else g.dtype()
    b, n2, grp, d = r.randint(1, 2), r.randint(1, 2), r.choice((1, 2)), r.choice((8, 16))
    n1 = n2 * grp
    s1, s2 = r.randint(1, 9), r.randint(1, 9)
    if tnd:
        lq, lk = [r.randint(0, 5) for _ in range(b)], [r.randint(1, 5) for _ in range(b)]
        cq, ck = [sum(lq[:i + 1]) for i in range(b)], [sum(lk[:i + 1]) for i in range(b)]
        qs, ks = [cq[-1], n1, d], [ck[-1], n2, d]
        rows = [cq[-1], n1, 8]
    else:
        def lay(s, n):
            return {"BSH": [b, s, n * d], "SBH": [s, b, n * d], "BSND": [b, s, n, d], "BNSD": [b, n, s, d]}[layout]
        qs, ks = lay(s1, n1), lay(s2, n2)
        rows = [b, n1, s1, 8]
    sparse = 0
    mask = None
    x = r.random()
    if x < 0.12 and not tnd:
        mask = g.tensor(12, [s1, s2], fill={"m": "bits", "s": g.seed()})
    elif x < 0.2:
        sparse, mask = r.choice((2, 3)), g.tensor(12, [2048, 2048], fill={"m": "bits", "s": g.seed()}, layout=False)
    keep = 1.0
    drop = None
    if r.random() < 0.15:
        keep = r.choice((0.5, 0.9))
        if "seed" not in names or r.random() < 0.3:
            n = n1 * (sum(a * c for a, c in zip(lq, lk)) if tnd else b * s1 * s2)
            drop = g.tensor(4, [_mask_bytes(n)], fill=g.fill(4, "raw"))
    args = {"query": g.tensor(dt, qs), "key": g.tensor(dt, ks), "keyIn": g.tensor(dt, ks), "value": g.tensor(dt, ks),
            "dropMaskOptional": drop, "attenMaskOptional": mask, "realShiftOptional": None, "pseShiftOptional": None,
            "scaleValue": r.choice((0.25, 1.0, 0.125)), "keepProb": keep, "preTokens": 2 ** 31 - 1,
            "nextTokens": r.choice((2 ** 31 - 1, 0)), "headNum": n1, "inputLayout": layout, "innerPrecise": r.choice((0, 2)),
            "sparseMode": sparse, "pseType": 1, "outDtype": 0, "softmaxOutLayout": "", "softmaxInLayout": "",
            "seed": r.choice((0, 7, 2 ** 40)), "offset": r.choice((0, 12)), "prefixOptional": None,
            "qStartIdxOptional": None, "kvStartIdxOptional": None}
    if tnd:
        args.update({"actualSeqQLenOptional": {"ia": cq}, "actualSeqKvLenOptional": {"ia": ck}})
    if "Grad" in g.op:
        args.update({"dy": g.tensor(dt, qs), "attentionInOptional": g.tensor(dt, qs),
                     "softmaxMaxOptional": g.tensor(0, rows), "softmaxSumOptional": g.tensor(0, rows, fill=g.fill(0, "pos")),
                     "softmaxInOptional": None, "dqOut": g.out(dt, qs), "dkOut": g.out(dt, ks), "dvOut": g.out(dt, ks),
                     "dpseOut": None})
    else:
        args.update({"softmaxMaxOut": g.out(0, rows), "softmaxSumOut": g.out(0, rows), "softmaxOutOut": g.out(dt, [0]),
                     "attentionOutOut": g.out(dt, qs)})
    for k in [k for k in args if k not in names]:
        args.pop(k)
    for p in g.inp:                     # rope, dScale*, sink: NULL
        if p[0] not in args and p[1] == "tensor":
            args[p[0]] = None
    return args


BUILDERS = {
    "aclnnCast": build_cast, "aclnnGeluV2": build_gelu, "aclnnGeluBackwardV2": build_gelu_backward,
    "aclnnTriu": build_triu, "aclnnInplaceTriu": build_triu,
    "aclnnAmax": build_reduce_dims, "aclnnReduceSum": build_reduce_dims, "aclnnMean": build_reduce_dims,
    "aclnnMax": build_max_all, "aclnnMin": build_max_all,
    "aclnnMaxDim": build_dim_reduce, "aclnnMinDim": build_dim_reduce, "aclnnArgMax": build_dim_reduce,
    "aclnnSoftmax": build_softmax, "aclnnLogSoftmax": build_softmax, "aclnnSoftmaxBackward": build_softmax,
    "aclnnLogSoftmaxBackward": build_softmax, "aclnnCumsum": build_cumsum, "aclnnTopk": build_topk,
    "aclnnMatmul": build_matmul, "aclnnMm": build_matmul, "aclnnBatchMatMul": build_matmul,
    "aclnnAddmm": build_matmul, "aclnnInplaceAddmm": build_matmul,
    "aclnnCat": build_cat_stack, "aclnnStack": build_cat_stack, "aclnnPermute": build_permute,
    "aclnnArange": build_arange, "aclnnIndexSelect": build_index_select, "aclnnEmbedding": build_embedding,
    "aclnnEmbeddingDenseBackward": build_embedding_backward, "aclnnIndex": build_index,
    "aclnnIndexPutImpl": build_index_put, "aclnnMaskedSelect": build_masked_select,
    "aclnnInplaceMaskedFillScalar": build_masked_fill, "aclnnSWhere": build_where, "aclnnNonzeroV2": build_nonzero,
    "aclnnLayerNorm": build_layer_norm, "aclnnLayerNormBackward": build_layer_norm,
    "aclnnNLLLoss": build_nll, "aclnnNLLLossBackward": build_nll,
    "aclnnDropoutGenMaskV2": build_dropout_gen_mask, "aclnnDropoutDoMask": build_dropout_do_mask,
    "aclnnDropoutV3": build_dropout_v3, "aclnnInplaceUniform": build_random, "aclnnInplaceNormal": build_random,
    "aclnnAmpUpdateScale": build_amp, "aclnnAddRmsNormDynamicQuant": build_arnq,
    "aclnnAddRmsNormDynamicQuantV2": build_arnq, "aclnnGroupedDynamicMxQuant": build_gmq,
    "aclnnGroupedDynamicMxQuantV2": build_gmq,
    "aclnnDivMod": build_divmod, "aclnnDivMods": build_divmod, "aclnnInplaceDivMod": build_divmod,
    "aclnnInplaceDivMods": build_divmod,
}
BUILDERS.update({f"aclnnFlashAttention{v}": build_flash_attention for v in (
    "Score", "ScoreV2", "ScoreV4", "VarLenScore", "VarLenScoreV2", "VarLenScoreV4", "ScoreGrad", "ScoreGradV2",
    "ScoreGradV4", "UnpaddingScoreGrad", "UnpaddingScoreGradV2")})


# ---- issue 28: reductions, sort, nonzero, equality, sampling (appended; one builder per shape of call) ------

FLOAT_POOL = (0, 1, 27, 0, 1, 27, 11)


def build_reduce28(g: Gen) -> dict:
    """Any / All / Var* / Std* / LogSumExp / Prod / ProdDim / LinalgVectorNorm / Norm: self, a dim list (or one
    dim), keep, the op's own attributes, out(s) of the reduced shape."""
    r = g.rng
    op = g.op
    names = [p[0] for p in g.inp]
    kinds = {p[0]: p[1] for p in g.inp}
    shape = g.shape(zero=0.03)
    nd = len(shape)
    logical = op in ("aclnnAny", "aclnnAll")
    dt = g.dtype() if logical or op in ("aclnnProd", "aclnnProdDim") else g.dtype(FLOAT_POOL) \
        if r.random() < 0.9 else g.dtype()
    args = {"self": g.tensor(dt, shape, fill=g.fill(dt, "small" if op.startswith("aclnnProd") else "any"))}
    dname = next((n for n in ("dim", "dims") if n in names), None)
    dims = []
    if dname and kinds[dname] == "int":
        dims = [r.randrange(-nd, nd) if nd else r.choice((0, -1))]
        args[dname] = dims[0]
    elif dname:
        dims = _pick_dims(g, nd)
        args[dname] = None if (kinds[dname] == "int_array" and "Var" in op or "Std" in op) and r.random() < 0.15 \
            else {"ia": dims}
        if args[dname] is None:
            dims = []
    kname = next((n for n in ("keepdim", "keepDim", "keepDims") if n in names), None)
    keep = r.random() < 0.5 if kname else False
    if kname:
        args[kname] = keep
    if "correction" in names:
        args["correction"] = r.choice((0, 1, 1, 2))
    for sname in ("ord", "pScalar"):
        if sname in names:
            args[sname] = g.scalar(0, r.choice((2.0, 1.0, 0.0, 3.0, math.inf, -math.inf, 0.5)))
    od = 12 if logical else dt
    if "dtype" in names:
        od = dt if r.random() < 0.8 else g.dtype(FLOAT_POOL)
        args["dtype"] = od
    if op == "aclnnLogSumExp" and od not in (0, 1, 27):
        od = 0
    oshape = _reduce_shape(shape, dims, keep) if nd and (dname or kname) else []
    for oname in [p[0] for p in g.inp if p[3] == "out"]:
        args[oname] = g.out(od if r.random() < 0.9 else g.dtype(), oshape)
    return args


def build_cumprod(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype(FLOAT_POOL + (3, 9, 2, 4))
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    args = {"input": g.tensor(dt, shape, fill=g.fill(dt, "small")), "dim": g.scalar(r.choice((9, 9, 3)), float(dim))}
    if g.op == "aclnnCumprod":
        od = dt if r.random() < 0.8 else g.dtype(FLOAT_POOL)
        args.update({"dtype": od, "out": g.out(od, shape)})
    return args


def build_sort(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(zero=0.02)
    dt = g.dtype((0, 1, 27, 3, 9, 2, 4, 6, 12))
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    return {"self": g.tensor(dt, shape, fill=g.fill(dt, r.choice(("small", "normal", "raw")))), "stable": r.random() < 0.5,
            "dim": dim, "descending": r.random() < 0.5, "valuesOut": g.out(dt, shape),
            "indicesOut": g.out(9 if r.random() < 0.9 else 3, shape)}


def build_equal28(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    other = g.tensor(dt, shape if r.random() < 0.8 else g.shape(), fill={"m": "const", "v": 1}) \
        if r.random() < 0.3 else g.tensor(dt if r.random() < 0.8 else g.dtype(), g.bcast(shape))
    args = {"self": g.tensor(dt, shape, fill={"m": "const", "v": 1} if r.random() < 0.3 else g.fill(dt, "small")),
            "other": other}
    if g.op == "aclnnEqual":
        args["out"] = g.out(12 if r.random() < 0.9 else 0, [1])
    else:
        args.update({"rtol": r.choice((1e-5, 0.01, 0.0)), "atol": r.choice((1e-8, 0.5, 0.0)),
                     "equalNan": r.random() < 0.5, "out": g.out(12, shape)})
    return args


def build_nonzero_v1(g: Gen) -> dict:
    args = build_nonzero(g)
    shape = args["out"]["sh"]
    args["out"]["sh"] = shape[::-1]
    return args


def build_sampling(g: Gen) -> dict:
    """InplaceRandom(WithoutFromTo), InplaceBernoulli(Tensor), Randperm, Multinomial."""
    r = g.rng
    op = g.op
    seed, offset = r.choice((0, 1, 5, 2 ** 40)), r.choice((0, 0, 8, 2 ** 33))
    if op == "aclnnRandperm":
        n = r.choice((0, 1, 5, 17, 100))
        return {"n": n, "seed": seed, "offset": offset,
                "out": g.out(g.dtype((9, 3, 0, 1, 11, 2, 4, 6, 27)), [n if r.random() < 0.9 else n + 1])}
    if op.startswith("aclnnMultinomial"):
        shape = g.shape(rank=r.choice((1, 2, 2)), zero=0.02)
        k = r.randint(1, max(1, shape[-1])) if r.random() < 0.9 else r.choice((0, shape[-1] + 1))
        dt = g.dtype((0, 1, 27, 11))
        return {"self": g.tensor(dt, shape, fill=g.fill(dt, "pos")), "numsamples": k, "replacement": r.random() < 0.5,
                "seed": seed, "offset": offset, "out": g.out(9, shape[:-1] + [k])}
    shape = g.shape()
    dt = g.dtype()
    args = {"selfRef": g.tensor(dt, shape), "seed": seed, "offset": offset}
    if op == "aclnnInplaceRandom":
        lo = r.choice((0, -5, 3, 100))
        args.update({"from": lo, "to": lo + r.choice((1, 10, 1000, 0, -1))})
    elif op == "aclnnInplaceBernoulli":
        args["prob"] = g.scalar(11, r.choice((0.0, 0.3, 1.0, 0.5, 1.5)))
    elif op == "aclnnInplaceBernoulliTensor":
        args["prob"] = g.tensor(g.dtype(FLOAT_POOL), g.bcast(shape), fill={"m": "uni", "s": g.seed(), "lo": 0.0, "hi": 1.0})
    return args


def build_bincount(g: Gen) -> dict:
    r = g.rng
    n = r.choice((0, 1, 5, 17))
    dt = g.dtype((3, 9, 2, 4, 6))
    w = None if r.random() < 0.5 else g.tensor(g.dtype((0, 11, 3, 12)), [n])
    size = r.choice((6, 9, 12))
    od = (9 if w is None else r.choice((0, 11))) if r.random() < 0.9 else g.dtype()
    return {"self": g.tensor(dt, [n] if r.random() < 0.9 else [n, 2], fill={"m": "int", "s": g.seed(), "lo": 0, "hi": 9}),
            "weights": w, "minlength": r.choice((0, 3, 12)), "out": g.out(od, [size])}


BUILDERS.update({op: build_reduce28 for op in (
    "aclnnAny", "aclnnAll", "aclnnVarCorrection", "aclnnVarMean", "aclnnStd", "aclnnStdMeanCorrection",
    "aclnnLogSumExp", "aclnnProd", "aclnnProdDim", "aclnnLinalgVectorNorm", "aclnnNorm")})
BUILDERS.update({"aclnnCumprod": build_cumprod, "aclnnInplaceCumprod": build_cumprod, "aclnnSort": build_sort,
                 "aclnnEqual": build_equal28, "aclnnIsClose": build_equal28, "aclnnNonzero": build_nonzero_v1,
                 "aclnnBincount": build_bincount})
BUILDERS.update({op: build_sampling for op in (
    "aclnnInplaceRandom", "aclnnInplaceRandomWithoutFromTo", "aclnnInplaceBernoulli", "aclnnInplaceBernoulliTensor",
    "aclnnRandperm", "aclnnMultinomial")})

# ---- gather / scatter, pads, shape moves (index/gather_scatter.toml, pad/pad.toml, conversion/shape.toml) ----

def _ints(g: Gen, lo: int, hi: int) -> dict:
    return {"m": "int", "s": g.seed(), "lo": lo, "hi": max(hi, lo + 1)}


def build_gather(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    dim = r.randrange(-nd, nd)
    ish = [r.randint(0, s) if k != dim % nd else r.randint(0, 4) for k, s in enumerate(shape)]
    dt = g.dtype()
    size = shape[dim]
    idx = g.tensor(r.choice((9, 3, 9)), ish, fill=_ints(g, -size if r.random() < 0.2 else 0, size))
    return {"self": g.tensor(dt, shape), "dim": dim, "index": idx, "out": g.out(dt, ish)}


def build_scatter(g: Gen) -> dict:
    r = g.rng
    args = build_gather(g)
    shape, ish = args["self"]["sh"], args["index"]["sh"]
    dt = args["self"]["d"]
    names = [p[0] for p in g.inp]
    key = "selfRef" if "selfRef" in names else "self"
    args[key] = args.pop("self")
    args.pop("out")
    if "src" in names:
        args["src"] = g.tensor(dt if r.random() < 0.9 else g.dtype(), [d + r.choice((0, 0, 1)) for d in ish])
    if "value" in names:
        args["value"] = g.scalar()
    if "reduce" in names:
        args["reduce"] = r.choice((0, 1, 2, 0, 1, 3))
    if "out" in names:
        args["out"] = g.out(dt, shape)
    return args


def build_index_add(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    dim = r.randrange(-nd, nd)
    n = r.randint(0, 5)
    dt = g.dtype()
    sshape = list(shape)
    sshape[dim] = n
    return {"self": g.tensor(dt, shape), "dim": dim,
            "index": g.tensor(r.choice((9, 3)), [n], fill=_ints(g, 0, shape[dim])),
            "source": g.tensor(dt, sshape), "alpha": g.scalar(), "out": g.out(dt, shape)}


def build_index_fill(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1, zero=0.02)
    nd = len(shape)
    dim = r.randrange(-nd, nd)
    size = shape[dim]
    dt = g.dtype()
    names = [p[0] for p in g.inp]
    key = "selfRef" if "selfRef" in names else "self"
    n = r.randint(0, 4)
    if "Tensor" in g.op:
        index = {"ia": [r.randrange(-size, size) if size else 0 for _ in range(n)]}
    else:
        index = g.tensor(r.choice((9, 3)), [n], fill=_ints(g, -size if r.random() < 0.2 else 0, size))
    args = {key: g.tensor(dt, shape), "dim": dim, "index": index, "value": g.scalar()}
    if "out" in names:
        args["out"] = g.out(dt, shape)
    return args


def build_masked_scatter(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype()
    mask = g.tensor(12 if r.random() < 0.85 else 4, g.bcast(shape), fill=_ints(g, 0, 2))
    return {"selfRef": g.tensor(dt, shape), "mask": mask,
            "source": g.tensor(dt if r.random() < 0.9 else g.dtype(), [_numel(shape) + r.choice((0, 2, -1))])}


def build_embedding_renorm(g: Gen) -> dict:
    r = g.rng
    rows, cols = r.randint(1, 6), r.randint(1, 6)
    return {"selfRef": g.tensor(g.dtype((0, 1, 27, 0)), [rows, cols]),
            "indices": g.tensor(r.choice((9, 3)), g.shape(lo=0, hi=2), fill=_ints(g, 0, rows)),
            "maxNorm": r.choice((1.0, 0.5, 2.0, math.inf, math.nan)), "normType": r.choice((2.0, 1.0, 3.0, math.inf))}


def _padded(shape, pad):
    out = list(shape)
    for i in range(len(pad) // 2):
        out[len(shape) - 1 - i] += pad[2 * i] + pad[2 * i + 1]
    return out


def build_constant_pad(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(zero=0.02)
    k = r.randint(0, len(shape))
    pad = [r.choice((0, 1, 2, -1, 3)) for _ in range(2 * k)]
    dt = g.dtype()
    out = _padded(shape, pad)
    return {"self": g.tensor(dt, shape), "pad": {"ia": pad}, "value": g.scalar(),
            "out": g.out(dt, [max(d, 0) for d in out])}


def build_mirror_pad(g: Gen) -> dict:
    r = g.rng
    k = int(re.search(r"Pad(\d)d", g.op).group(1))
    shape = [r.randint(1, 3) for _ in range(r.choice((1, 2)))] + [r.randint(2, 5) for _ in range(k)]
    reflect = "Reflection" in g.op
    pad = []
    for i in range(k):
        d = shape[len(shape) - 1 - i]
        pad += [r.randint(0, d - 1 if reflect else 3) for _ in range(2)]
    dt = g.dtype((0, 1, 27, 11)) if "Backward" in g.op else g.dtype()
    out = _padded(shape, pad)
    if "Backward" in g.op:
        return {"gradOutput": g.tensor(dt, out), "self": g.tensor(dt, shape), "padding": {"ia": pad},
                "gradInput": g.out(dt, shape)}
    return {"self": g.tensor(dt, shape), "padding": {"ia": pad}, "out": g.out(dt, out)}


def build_flip(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    nd = max(len(shape), 1)
    dims = r.sample(range(nd), r.randint(0, nd))
    dt = g.dtype()
    return {"self": g.tensor(dt, shape), "dims": {"ia": [d - nd if r.random() < 0.3 else d for d in dims]},
            "out": g.out(dt, shape)}


def build_roll(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(lo=1)
    nd = len(shape)
    dims = [r.randrange(-nd, nd) for _ in range(r.randint(0, 2))]
    shifts = [r.randint(-7, 7) for _ in range(max(len(dims), 1))]
    dt = g.dtype()
    return {"x": g.tensor(dt, shape), "shifts": {"ia": shifts}, "dims": {"ia": dims}, "out": g.out(dt, shape)}


def build_repeat(g: Gen) -> dict:
    r = g.rng
    shape = g.shape(hi=3)
    reps = [r.randint(0, 3) for _ in range(len(shape) + r.randint(0, 2))]
    full = [1] * (len(reps) - len(shape)) + list(shape)
    dt = g.dtype()
    return {"self": g.tensor(dt, shape), "repeats": {"ia": reps},
            "out": g.out(dt, [a * b for a, b in zip(full, reps)] if reps else shape)}


def build_repeat_interleave(g: Gen) -> dict:
    r = g.rng
    names = [p[0] for p in g.inp]
    if "self" not in names:                                       # RepeatInterleaveTensor
        n = r.randint(0, 5)
        counts = [r.randint(0, 3) for _ in range(n)]
        dt = r.choice((9, 3))
        return {"repeats": g.tensor(dt, [n], fill={"m": "const", "v": 2}), "outputSize": 2 * n,
                "out": g.out(dt, [2 * n])} if r.random() < 0.5 else \
               {"repeats": g.tensor(dt, [n], fill=_ints(g, 1, 2)), "outputSize": n, "out": g.out(dt, [n])}
    shape = g.shape(lo=1, hi=3)
    dt = g.dtype()
    with_dim = "dim" in names
    dim = r.randrange(-len(shape), len(shape))
    along = shape[dim] if with_dim else _numel(shape)
    if g.inp[[p[0] for p in g.inp].index("repeats")][1] == "tensor":
        c = r.randint(1, 3)
        n = 1 if r.random() < 0.3 else along
        reps = g.tensor(r.choice((9, 3)), [n], fill={"m": "const", "v": c})
    else:
        c = r.randint(0, 3)
        reps = c
    size = along * c
    oshape = list(shape) if with_dim else [size]
    if with_dim:
        oshape[dim] = size
    args = {"self": g.tensor(dt, shape), "repeats": reps, "outputSize": size, "out": g.out(dt, oshape)}
    if with_dim:
        args["dim"] = dim
    return args


def build_masked_fill_tensor(g: Gen) -> dict:
    r = g.rng
    shape = g.shape()
    dt = g.dtype((0, 1, 27, 3, 9, 2, 12))
    mask = g.tensor(12 if r.random() < 0.9 else 4, g.bcast(shape), fill=_ints(g, 0, 2))
    return {"selfRef": g.tensor(dt, shape), "mask": mask,
            "value": g.tensor(dt if r.random() < 0.8 else g.dtype(), [] if r.random() < 0.9 else [1])}


def build_linspace(g: Gen) -> dict:
    r = g.rng
    n = r.choice((0, 1, 2, 5, 17, 40))
    dt = g.dtype((0, 1, 27, 11, 3, 9, 6, 2, 4))
    return {"start": g.scalar(None, r.choice((0.0, -1.0, 2.5, 10.0))), "end": g.scalar(None, r.choice((1.0, 3.3, -4.0))),
            "steps": n if r.random() < 0.9 else -1, "out": g.out(dt, [n if r.random() < 0.9 else n + 1])}


BUILDERS.update({
    "aclnnGather": build_gather, "aclnnScatter": build_scatter, "aclnnScatterValue": build_scatter,
    "aclnnInplaceScatter": build_scatter, "aclnnInplaceScatterValue": build_scatter, "aclnnScatterAdd": build_scatter,
    "aclnnIndexAdd": build_index_add, "aclnnIndexFill": build_index_fill, "aclnnInplaceIndexFill": build_index_fill,
    "aclnnIndexFillTensor": build_index_fill, "aclnnInplaceIndexFillTensor": build_index_fill,
    "aclnnInplaceMaskedScatter": build_masked_scatter, "aclnnEmbeddingRenorm": build_embedding_renorm,
    "aclnnConstantPadNd": build_constant_pad,
    **{f"aclnn{m}Pad{k}d{b}": build_mirror_pad for m in ("Reflection", "Replication") for k in (1, 2, 3)
       for b in ("", "Backward")},
    "aclnnTril": build_triu, "aclnnInplaceTril": build_triu, "aclnnFlip": build_flip, "aclnnRoll": build_roll,
    "aclnnRepeat": build_repeat, "aclnnInplaceMaskedFillTensor": build_masked_fill_tensor,
    "aclnnLinspace": build_linspace,
    **{f"aclnnRepeatInterleave{s}": build_repeat_interleave for s in ("", "WithDim", "Int", "IntWithDim", "Tensor")},
})


# ---- issue 28: convolutions, pooling, batch / group norm (conv/convolution.toml, pool/*.toml, norm/*.toml) ----

CNN_FLOAT = (0, 0, 1, 27)


def _conv_out(i: int, k: int, p_total: int, s: int, d: int, tr: bool, opad: int = 0) -> int:
    if tr:
        return (i - 1) * s - p_total + d * (k - 1) + opad + 1
    return (i + p_total - d * (k - 1) - 1) // s + 1


def _conv_geometry(g: Gen, backward: bool):
    """A convolution's sizes: spatial rank, batch, channels, groups, kernel, stride, padding (the list and the
    totals per dim), dilation, outputPadding, transposed; input, weight and output shapes."""
    r = g.rng
    nd = r.choice((1, 2, 2, 2, 3))
    tr = r.random() < 0.25
    groups = r.choice((1, 1, 1, 2))
    cin_g, cout_g = r.randint(1, 2), r.randint(1, 2)
    cin, cout = cin_g * groups, cout_g * groups
    n = r.randint(1, 2)
    k = [r.choice((1, 2, 3)) if nd < 3 else r.choice((1, 2)) for _ in range(nd)]
    st = [r.choice((1, 1, 2)) for _ in range(nd)]
    dil = [1 if r.random() < 0.8 else 2 for _ in range(nd)]
    pad = [r.choice((0, 0, 1)) for _ in range(nd)]
    totals = [2 * p for p in pad]
    pad_list = list(pad)
    if nd == 2 and not tr and r.random() < 0.2:          # [top, bottom, left, right]
        pad_list = [pad[0], r.choice((0, 1)), pad[1], r.choice((0, 1))]
        totals = [pad_list[0] + pad_list[1], pad_list[2] + pad_list[3]]
        pad = [pad_list[0], pad_list[2]]
    opad = [r.randrange(max(s, 1)) if tr and r.random() < 0.5 else 0 for s in st]
    smax = {1: 7, 2: 5, 3: 3}[nd]
    spatial = []
    for d in range(nd):
        lo = 1 if tr else max(1, dil[d] * (k[d] - 1) + 1 - totals[d])
        spatial.append(r.randint(lo, max(lo, smax)))
    if tr:
        w = [cin, cout_g] + k
        o = [n, cout] + [_conv_out(spatial[d], k[d], totals[d], st[d], dil[d], True, opad[d]) for d in range(nd)]
        if any(v <= 0 for v in o[2:]):           # a padding larger than the output: pad 0
            pad = [0] * nd
            pad_list = [0] * nd
            o = [n, cout] + [_conv_out(spatial[d], k[d], 0, st[d], dil[d], True, opad[d]) for d in range(nd)]
    else:
        w = [cout, cin_g] + k
        o = [n, cout] + [_conv_out(spatial[d], k[d], totals[d], st[d], dil[d], False) for d in range(nd)]
    x = [n, cin] + spatial
    if r.random() < 0.03:
        x[0] = o[0] = 0                          # an empty batch
    return dict(nd=nd, tr=tr, groups=groups, k=k, st=st, dil=dil, pad=pad_list, opad=opad, x=x, w=w, o=o, cout=cout)


def build_convolution(g: Gen) -> dict:
    """Convolution / ConvolutionBackward: 1d-3d, groups, stride, padding (2d sometimes 4 values), dilation,
    transposed with outputPadding; the output / gradients of torch's shapes; now and then one thing wrong."""
    r = g.rng
    c = _conv_geometry(g, "Backward" in g.op)
    dt = g.dtype(CNN_FLOAT) if r.random() < 0.95 else g.dtype()
    x, w, o = list(c["x"]), list(c["w"]), list(c["o"])
    st, pad, dil, opad, groups = list(c["st"]), list(c["pad"]), list(c["dil"]), list(c["opad"]), c["groups"]
    bad = r.random() < 0.12
    if bad:                                      # one deliberate mistake
        what = r.randrange(7)
        if what == 0:
            o[-1] += 1
        elif what == 1:
            st[0] = r.choice((0, -1))
        elif what == 2:
            pad = pad + [0]
        elif what == 3:
            dil[-1] = 0
        elif what == 4:
            groups = r.choice((0, 3, -1))
        elif what == 5:
            w[1] += 1
        else:
            opad = [s + 1 for s in st]
    cube = r.choice((0, 0, 1, 1, 2, 3)) if r.random() < 0.95 else r.choice((5, -1))
    if "Backward" not in g.op:
        bias = None if r.random() < 0.35 else g.tensor(dt if r.random() < 0.85 else g.dtype(CNN_FLOAT), [c["cout"]])
        return {"input": g.tensor(dt, x), "weight": g.tensor(dt, w), "bias": bias, "stride": {"ia": st},
                "padding": {"ia": pad}, "dilation": {"ia": dil}, "transposed": c["tr"],
                "outputPadding": {"ia": opad} if c["tr"] or r.random() < 0.7 else None, "groups": groups,
                "output": g.out(dt, o), "cubeMathType": cube}
    mask = [r.random() < 0.85, r.random() < 0.7, r.random() < 0.6]
    gb = [c["cout"]]
    return {"gradOutput": g.tensor(dt, o), "input": g.tensor(dt, x), "weight": g.tensor(dt, w),
            "biasSizes": {"ia": gb} if r.random() < 0.7 else None, "stride": {"ia": st}, "padding": {"ia": pad},
            "dilation": {"ia": dil}, "transposed": c["tr"], "outputPadding": {"ia": opad}, "groups": groups,
            "outputMask": {"ba": mask}, "cubeMathType": cube % 4 if cube >= 0 and r.random() < 0.9 else cube,
            "gradInput": g.out(dt, x) if mask[0] or r.random() < 0.5 else None,
            "gradWeight": g.out(dt, w) if mask[1] or r.random() < 0.5 else None,
            "gradBias": g.out(dt, gb) if mask[2] or r.random() < 0.5 else None}


def _pool_out(i: int, k: int, p: int, s: int, d: int, ceil: bool) -> int:
    num = i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _pool_geometry(g: Gen, dilation: bool, max_nc: int = 4):
    """self [N, C, H, W] or [C, H, W], kernel, stride (maybe empty: the kernel), padding <= kernel / 2,
    dilation, ceilMode, and the pooled shape."""
    r = g.rng
    lead = [r.randint(1, 2), r.randint(1, 2)] if r.random() < 0.7 else [r.randint(1, 3)]
    while _numel(lead) > max_nc:
        lead[-1] -= 1
    kh, kw = r.choice((1, 2, 2, 3)), r.choice((1, 2, 2, 3))
    if r.random() < 0.4:
        kw = kh
    sh, sw = r.choice((1, 2, 2)), r.choice((1, 2, 2))
    ph, pw = r.randint(0, kh // 2), r.randint(0, kw // 2)
    dh = dw = 1
    if dilation and r.random() < 0.08:
        dh, dw = r.choice((1, 2)), 2
    ceil = r.random() < 0.3
    h = r.randint(max(1, (kh - 1) * dh + 1 - 2 * ph), 7)
    w = r.randint(max(1, (kw - 1) * dw + 1 - 2 * pw), 7)
    oh, ow = _pool_out(h, kh, ph, sh, dh, ceil), _pool_out(w, kw, pw, sw, dw, ceil)
    ks = {"ia": [kh]} if kh == kw and r.random() < 0.4 else {"ia": [kh, kw]}
    ss = {"ia": []} if (sh, sw) == (kh, kw) and r.random() < 0.5 else \
        {"ia": [sh]} if sh == sw and r.random() < 0.4 else {"ia": [sh, sw]}
    ps = {"ia": [ph]} if ph == pw and r.random() < 0.4 else {"ia": [ph, pw]}
    ds = {"ia": [dh]} if dh == dw and r.random() < 0.4 else {"ia": [dh, dw]}
    return dict(lead=lead, h=h, w=w, oh=oh, ow=ow, kh=kh, kw=kw, ks=ks, ss=ss, ps=ps, ds=ds, ceil=ceil)


def _pool_mistake(g: Gen, p: dict, args: dict, names: dict) -> None:
    """One deliberate mistake in a pooling call: a kernel / stride / padding out of range or a list too long,
    an output one row too many."""
    r = g.rng
    what = r.randrange(5)
    if what == 0 and names.get("k"):
        args[names["k"]] = {"ia": r.choice(([0, 2], [2, -1], [2, 2, 2], []))}
    elif what == 1 and names.get("s"):
        args[names["s"]] = {"ia": r.choice(([0], [1, -2], [1, 1, 1]))}
    elif what == 2 and names.get("p"):
        args[names["p"]] = {"ia": r.choice(([p["kh"] + 1], [-1, 0], [0, 0, 0]))}
    elif what == 3 and names.get("out"):
        t = args[names["out"]]
        t = _resize(g, t, shape=t["sh"][:-2] + [t["sh"][-2] + 1, t["sh"][-1]])
        args[names["out"]] = t
    elif names.get("d"):
        args[names["d"]] = {"ia": r.choice(([0], [2, 2], [1, 1, 1]))}


def build_avg_pool(g: Gen) -> dict:
    """AvgPool2d / AvgPool2dBackward: kernel, strides (empty: the kernel), paddings, ceilMode, countIncludePad,
    divisorOverride; out / gradOutput of the pooled shape."""
    r = g.rng
    p = _pool_geometry(g, False)
    dt = g.dtype(CNN_FLOAT) if r.random() < 0.93 else g.dtype()
    xs = p["lead"] + [p["h"], p["w"]]
    os_ = p["lead"] + [p["oh"], p["ow"]]
    common = {"ceilMode": p["ceil"], "countIncludePad": r.random() < 0.6,
              "divisorOverride": 0 if r.random() < 0.7 else r.choice((1, 3, 5, -2)),
              "cubeMathType": r.choice((0, 0, 1, 2, 3)) if r.random() < 0.95 else r.choice((5, -1))}
    if "Backward" in g.op:
        args = {"gradOutput": g.tensor(dt, os_), "self": g.tensor(dt, xs), "kernelSize": p["ks"],
                "stride": None if p["ss"]["ia"] == [] and r.random() < 0.5 else p["ss"], "padding": p["ps"],
                "gradInput": g.out(dt, xs), **common}
        names = {"k": "kernelSize", "s": "stride", "p": "padding", "out": "gradOutput"}
    else:
        args = {"self": g.tensor(dt, xs), "kernelSize": p["ks"], "strides": p["ss"], "paddings": p["ps"],
                "out": g.out(dt, os_), **common}
        names = {"k": "kernelSize", "s": "strides", "p": "paddings", "out": "out"}
    if r.random() < 0.1:
        _pool_mistake(g, p, args, names)
    return args


def build_adaptive_avg_pool(g: Gen) -> dict:
    r = g.rng
    lead = [r.randint(1, 2), r.randint(1, 3)] if r.random() < 0.7 else [r.randint(1, 3)]
    h, w = r.randint(1, 7), r.randint(1, 7)
    oh, ow = r.randint(1, h + 1), r.randint(1, w + 1)
    if r.random() < 0.3:
        oh, ow = 1, 1
    dt = g.dtype(CNN_FLOAT) if r.random() < 0.93 else g.dtype()
    xs, os_ = lead + [h, w], lead + [oh, ow]
    bad = r.random() < 0.1
    if "Backward" in g.op:
        return {"gradOutput": g.tensor(dt, os_ if not bad else lead[:-1] + [oh, ow]), "self": g.tensor(dt, xs),
                "out": g.out(dt, xs if not bad or len(lead) == 1 else [lead[0] + 1] + xs[1:])}
    size = [oh, ow] if not bad else r.choice(([oh], [0, ow], [oh + 1, ow], [oh, ow, 1]))
    return {"self": g.tensor(dt, xs), "outputSize": {"ia": size}, "out": g.out(dt, os_)}


def build_max_pool(g: Gen) -> dict:
    """MaxPool2dWithIndices / WithMask and their backwards: kernel, stride, padding, dilation (2 valid on Ascend 950
    only), ceilMode; out, indices (or the mask [.., C, kH * kW, maskW] of int8) of the pooled shape."""
    r = g.rng
    mask = "Mask" in g.op
    p = _pool_geometry(g, True, max_nc=2 if mask else 4)
    if mask and p["kh"] * p["kw"] > 4 and _numel(p["lead"]) > 1:
        p["lead"] = [1] * len(p["lead"])
    backward = "Backward" in g.op
    if backward and not mask:
        dt = r.choice((0, 0, 0, 0, 0, 1, 27)) if r.random() < 0.95 else g.dtype()   # FLOAT only on Atlas A2/A3
        idt = r.choice((3, 3, 3, 3, 9, 2)) if r.random() < 0.95 else g.dtype()     # INT32 on both SoCs
    else:
        dt = r.choice((0, 1, 27)) if r.random() < 0.93 else g.dtype()
        idt = (2 if mask else r.choice((9, 3))) if r.random() < 0.93 else g.dtype()
    xs = p["lead"] + [p["h"], p["w"]]
    os_ = p["lead"] + [p["oh"], p["ow"]]
    if mask:
        mask_w = ((p["oh"] * p["ow"] + 15) // 16 + 1) * 32
        ishape = p["lead"] + [p["kh"] * p["kw"], mask_w]
    else:
        ishape = os_
    args = {"kernelSize": p["ks"], "stride": p["ss"], "padding": p["ps"], "dilation": p["ds"], "ceilMode": p["ceil"]}
    if backward:
        hw = p["h"] * p["w"]
        ifill = {"m": "int", "s": g.seed(), "lo": 0, "hi": 2 if mask else hw}
        if not mask and r.random() < 0.05:
            ifill["hi"] = hw + 5                 # some index past the plane
        args.update({"gradOutput": g.tensor(dt, os_), "self": g.tensor(dt, xs),
                     "indices": g.tensor(idt, ishape, fill=ifill), "gradInput": g.out(dt, xs)})
        names = {"k": "kernelSize", "s": "stride", "p": "padding", "d": "dilation", "out": "gradOutput"}
    else:
        args.update({"self": g.tensor(dt, xs), "out": g.out(dt, os_), "indices": g.out(idt, ishape)})
        names = {"k": "kernelSize", "s": "stride", "p": "padding", "d": "dilation", "out": "out"}
    if r.random() < 0.1:
        _pool_mistake(g, p, args, names)
    return args


def _norm_shape(g: Gen) -> list:
    r = g.rng
    rank = r.choice((2, 3, 3, 4, 4))
    shape = [r.randint(1, 3), r.choice((1, 2, 3, 4, 6))] + [r.randint(1, 4) for _ in range(rank - 2)]
    if r.random() < 0.03:
        shape[0] = 0
    return shape


def build_batch_norm(g: Gen) -> dict:
    """BatchNorm / BatchNormBackward: input [N, C, *], per-channel weight, bias, running and saved statistics
    (FLOAT or the input's dtype), training or inference; outputMask for the backward."""
    r = g.rng
    shape = _norm_shape(g)
    ch = shape[1]
    dt = g.dtype(CNN_FLOAT) if r.random() < 0.93 else g.dtype()
    sd = dt if r.random() < 0.5 else 0
    cs = [ch] if r.random() < 0.95 else [ch + 1]
    training = r.random() < 0.6
    pos = lambda d: g.fill(d, "pos")           # noqa: E731
    if "Backward" not in g.op:
        stats = r.random() < 0.7
        return {"input": g.tensor(dt, shape), "weight": g.tensor(sd, cs) if r.random() < 0.7 else None,
                "bias": g.tensor(sd, cs) if r.random() < 0.7 else None,
                "runningMean": g.tensor(sd, cs, layout=False) if stats else None,
                "runningVar": g.tensor(sd, cs, fill=pos(sd), layout=False) if stats else None,
                "training": training, "momentum": r.choice((0.1, 0.0, 1.0, 0.5)),
                "eps": r.choice((1e-5, 1e-3, 0.0, 0.1)), "output": g.out(dt, shape if r.random() < 0.95 else shape[:-1]),
                "saveMean": g.out(sd, cs) if training or r.random() < 0.5 else None,
                "saveInvstd": g.out(sd, cs) if training or r.random() < 0.5 else None}
    mask = [r.random() < 0.85, r.random() < 0.7, r.random() < 0.7]
    return {"gradOut": g.tensor(dt, shape), "input": g.tensor(dt, shape),
            "weight": g.tensor(sd, cs) if r.random() < 0.7 else None,
            "runningMean": g.tensor(sd, cs) if not training or r.random() < 0.5 else None,
            "runningVar": g.tensor(sd, cs, fill=pos(sd)) if not training or r.random() < 0.5 else None,
            "saveMean": g.tensor(sd, cs) if training or r.random() < 0.3 else None,
            "saveInvstd": g.tensor(sd, cs, fill=pos(sd)) if training or r.random() < 0.3 else None,
            "training": training, "eps": r.choice((1e-5, 1e-3, 0.1)), "outputMask": {"ba": mask},
            "gradInput": g.out(dt, shape) if mask[0] or r.random() < 0.5 else None,
            "gradWeight": g.out(sd, cs) if mask[1] or r.random() < 0.5 else None,
            "gradBias": g.out(sd, cs) if mask[2] or r.random() < 0.5 else None}


def build_group_norm(g: Gen) -> dict:
    """GroupNorm / GroupNormBackward: self [N, C, *] with N, C, HxW and a group dividing C; mean / rstd [N, group]
    (the backward on Ascend 950 sometimes with FLOAT statistics for half gradients)."""
    r = g.rng
    shape = _norm_shape(g)
    n, ch = shape[0], shape[1]
    hw = _numel(shape[2:])
    group = r.choice([d for d in range(1, ch + 1) if ch % d == 0])
    dt = r.choice((0, 1, 27)) if r.random() < 0.93 else g.dtype()
    N, C, HxW = n, ch, hw
    if r.random() < 0.08:
        N, C, HxW = r.choice(((n + 1, ch, hw), (n, ch + 1, hw), (n, ch, hw + 1)))
    if r.random() < 0.05:
        group = r.choice((0, ch + 1, -1))
    gs = [ch]
    if "Backward" not in g.op:
        gd = dt if r.random() < 0.95 else g.dtype(CNN_FLOAT)
        return {"self": g.tensor(dt, shape), "gamma": g.tensor(gd, gs) if r.random() < 0.7 else None,
                "beta": g.tensor(gd, gs) if r.random() < 0.7 else None, "N": N, "C": C, "HxW": HxW,
                "group": group, "eps": r.choice((1e-5, 1e-6, 0.1)) if r.random() < 0.95 else r.choice((0.0, -1.0)),
                "out": g.out(dt, shape), "meanOut": g.out(dt, [n, max(group, 0)]),
                "rstdOut": g.out(dt, [n, max(group, 0)])}
    md = dt if r.random() < 0.85 or dt == 0 else 0         # FLOAT statistics: Ascend 950 only
    mask = [r.random() < 0.85, r.random() < 0.7, r.random() < 0.7]
    st = [n, max(group, 0)]
    return {"gradOut": g.tensor(dt, shape), "input": g.tensor(dt, shape), "mean": g.tensor(md, st),
            "rstd": g.tensor(md, st, fill=g.fill(md, "pos")), "gamma": g.tensor(md, gs) if r.random() < 0.7 else None,
            "N": N, "C": C, "HxW": HxW, "group": group, "outputMask": {"ba": mask},
            "gradInput": g.out(dt, shape) if mask[0] or r.random() < 0.5 else None,
            "gradGammaOut": g.out(md, gs) if mask[1] or r.random() < 0.5 else None,
            "gradBetaOut": g.out(md, gs) if mask[2] or r.random() < 0.5 else None}


BUILDERS.update({
    "aclnnConvolution": build_convolution, "aclnnConvolutionBackward": build_convolution,
    "aclnnAvgPool2d": build_avg_pool, "aclnnAvgPool2dBackward": build_avg_pool,
    "aclnnAdaptiveAvgPool2d": build_adaptive_avg_pool, "aclnnAdaptiveAvgPool2dBackward": build_adaptive_avg_pool,
    **{f"aclnnMaxPool2dWith{k}{b}": build_max_pool for k in ("Indices", "Mask") for b in ("", "Backward")},
    "aclnnBatchNorm": build_batch_norm, "aclnnBatchNormBackward": build_batch_norm,
    "aclnnGroupNorm": build_group_norm, "aclnnGroupNormBackward": build_group_norm,
})


def build_upsample(g: Gen) -> dict:
    """The 2-D nearest / bilinear upsamplings and their backwards: [N, C, H, W] images, outputSize [OH, OW], scales
    from the sizes' ratio, none (-1 / 0) or negative, sometimes a wrong outputSize."""
    r = g.rng
    n, c, h, w = r.randint(1, 2), r.randint(1, 3), r.randint(1, 6), r.randint(1, 6)
    oh, ow = r.randint(1, 12), r.randint(1, 12)
    dt = g.dtype(CNN_FLOAT) if r.random() < 0.93 else g.dtype()
    xs, os_ = [n, c, h, w], [n, c, oh, ow]
    none = -1.0 if "Nearest" in g.op else 0.0
    sh, sw = (oh / h, ow / w) if r.random() < 0.5 else (none, none)
    if r.random() < 0.05:
        sh = -2.0
    size = [oh, ow] if r.random() < 0.9 else r.choice(([oh], [oh + 1, ow], [oh, ow, 1], [0, ow]))
    align = r.random() < 0.5
    if "Backward" in g.op:
        ins = xs if r.random() < 0.95 else [n, c, h]
        args = {"gradOut": g.tensor(dt, os_), "outputSize": {"ia": size}, "inputSize": {"ia": ins}}
        if "Bilinear" in g.op:
            args["alignCorners"] = align
        args.update({"scalesH": sh, "scalesW": sw})
        args["gradInput" if "Nearest" in g.op else "out"] = g.out(dt, xs)
        return args
    args = {"self": g.tensor(dt, xs), "outputSize": {"ia": size}}
    if "Bilinear" in g.op:
        args["alignCorners"] = align
    if g.op != "aclnnUpsampleNearest2d":
        args.update({"scalesH": sh, "scalesW": sw})
    args["out"] = g.out(dt, os_)
    return args


BUILDERS.update({f"aclnnUpsample{k}": build_upsample for k in ("Nearest2d", "Nearest2dV2", "Nearest2dBackward",
                                                                "Bilinear2d", "Bilinear2dBackwardV2")})


def build_foreach_norm(g: Gen) -> dict:
    """aclnnForeachNorm: x a list of one float dtype, out one element per tensor (of x's dtype), p FLOAT, DOUBLE
    or INT64 around 1, 2 and +inf."""
    r = g.rng
    count = r.choice((1, 2, 3, 0 if r.random() < 0.1 else 2))
    dt = g.pdtype()
    xs = [g.tensor(dt if r.random() < 0.95 else g.dtype(), g.shape(lo=0, hi=3)) for _ in range(count)]
    outs = [g.out(dt if r.random() < 0.95 else g.dtype(), [1] if r.random() < 0.9 else g.shape())
            for _ in range(count if r.random() < 0.95 else count + 1)]
    p = r.choice((1.0, 2.0, 2.0, math.inf, 1.5, 3.0))
    sdt = r.choice((0, 11, 9)) if r.random() < 0.9 else None
    return {"x": {"list": xs}, "out": {"list": outs},
            "scalar": g.scalar(sdt, int(p) if sdt == 9 and p != math.inf else p)}


BUILDERS["aclnnForeachNorm"] = build_foreach_norm


def build_apply_adam_w(g: Gen) -> dict:
    """aclnnApplyAdamWV2: var, m, v, grad (and maxGradNorm with amsgrad) of one shape and float dtype (FLOAT
    state with a FLOAT16/BF16 grad at times), step a one-element FLOAT/INT64 tensor, hyperparameters in range."""
    r = g.rng
    dt = g.pdtype()
    shape = g.shape(lo=0, hi=3)
    gdt = r.choice((1, 27)) if dt == 0 and r.random() < 0.3 else dt
    other = lambda d: d if r.random() < 0.95 else g.dtype()
    amsgrad = r.random() < 0.5
    return {"varRef": g.tensor(other(dt), shape), "mRef": g.tensor(other(dt), shape),
            "vRef": g.tensor(other(dt), shape, fill=g.fill(dt, "pos")),
            "maxGradNormOptionalRef": g.tensor(other(gdt), shape, fill=g.fill(gdt, "pos"))
            if amsgrad or r.random() < 0.3 else None,
            "grad": g.tensor(other(gdt), shape if r.random() < 0.95 else g.shape()),
            "step": g.tensor(r.choice((0, 9)) if r.random() < 0.95 else g.dtype(), [1] if r.random() < 0.95 else [2],
                             fill=g.fill(0, "pos")),
            "lr": r.choice((1e-3, 0.01, 0.1)), "beta1": r.choice((0.9, 0.8)), "beta2": r.choice((0.999, 0.99)),
            "weightDecay": r.choice((0.0, 0.01, 0.1)), "eps": r.choice((1e-8, 1e-6)), "amsgrad": amsgrad,
            "maximize": r.random() < 0.3}


BUILDERS["aclnnApplyAdamWV2"] = build_apply_adam_w


def build_pointwise_loss(g: Gen) -> dict:
    """MseLoss(Backward), SmoothL1Loss(Backward): self and target (and gradOutput) broadcast-compatible, mostly one float dtype; out of
    the broadcast shape (reduction 0, and the backward) or 0-D."""
    r = g.rng
    shape = g.shape()
    dt = g.dtype((0, 0, 1, 27)) if r.random() < 0.85 else g.dtype()
    red = r.choice((0, 1, 2, 1, 2)) if r.random() < 0.95 else r.choice((-1, 3))
    args = {"self": g.tensor(dt, g.bcast(shape)), "target": g.tensor(dt if r.random() < 0.85 else g.dtype(), g.bcast(shape)),
            "reduction": red}
    sl1 = "SmoothL1" in g.op
    if sl1:
        args["beta"] = r.choice((1.0, 0.5, 0.0, 2.0)) if r.random() < 0.95 else -1.0
    out = "gradInput" if sl1 and "Backward" in g.op else "result" if sl1 else "out"
    if "Backward" in g.op:
        gd = dt if r.random() < 0.9 else g.dtype()
        args = {"gradOut" if sl1 else "gradOutput": g.tensor(gd, g.bcast(shape) if r.random() < 0.6 else []), **args}
        args[out] = g.out(dt, shape if r.random() < 0.9 else g.shape())
    else:
        args[out] = g.out(dt if r.random() < 0.9 else g.dtype(), (shape if red == 0 else []) if r.random() < 0.9
                          else g.shape())
    return args


BUILDERS.update({op: build_pointwise_loss for op in (
    "aclnnMseLoss", "aclnnMseLossBackward", "aclnnSmoothL1Loss", "aclnnSmoothL1LossBackward")})


def build_bce_kl(g: Gen) -> dict:
    """BinaryCrossEntropy(WithLogits)(Backward), KlDiv(Backward): self and target mostly of one shape and one float
    dtype (KlDiv: broadcast-compatible), probabilities in (0, 1) for BinaryCrossEntropy, optional weights broadcasting
    to self, reductions mostly valid; out of self's shape (reduction 0, the backward) or 0-D."""
    r = g.rng
    shape = g.shape()
    dt = g.dtype((0, 0, 1, 27)) if r.random() < 0.85 else g.dtype()
    kl, logits, bwd = "KlDiv" in g.op, "Logits" in g.op, "Backward" in g.op
    red = r.choice((0, 1, 2, 1, 2) + ((3,) if kl else ())) if r.random() < 0.95 else r.choice((-1, 4))
    prob = {"m": "uni", "s": g.seed(), "lo": 0.02, "hi": 0.98}
    fill = prob if not (kl or logits) and r.random() < 0.9 else None
    other = lambda: dt if r.random() < 0.9 else g.dtype()
    args = {"self": g.tensor(dt, shape, fill=fill),
            "target": g.tensor(other(), g.bcast(shape) if kl or r.random() < 0.05 else shape, fill=prob)}
    if kl:
        args.update(reduction=red, logTarget=r.random() < 0.3)
    else:
        wname = "weightOptional" if logits or bwd else "weight"
        args[wname] = g.tensor(other(), shape if not (logits or bwd) else g.bcast(shape), fill=g.fill(dt, "pos")) \
            if r.random() < 0.5 else None
        if logits:
            args["posWeightOptional"] = g.tensor(other(), g.bcast(shape), fill=g.fill(dt, "pos")) if r.random() < 0.4 else None
        args["reduction"] = red
    if bwd:
        args = {"gradOutput": g.tensor(other(), g.bcast(shape) if red == 0 or r.random() < 0.3 else []), **args}
        args["out"] = g.out(dt, shape if r.random() < 0.9 else g.shape())
    else:
        args["out"] = g.out(dt, (shape if red == 0 else []) if r.random() < 0.9 else g.shape())
    return args


BUILDERS.update({op: build_bce_kl for op in (
    "aclnnBinaryCrossEntropy", "aclnnBinaryCrossEntropyBackward", "aclnnBinaryCrossEntropyWithLogits",
    "aclnnBinaryCrossEntropyWithLogitsBackward", "aclnnKlDiv", "aclnnKlDivBackward")})


# ---- the probe's operators (tests/test_probe_ops.py): Glu, Eye, OneHot, Baddbmm, L1Loss -------------------------

def _halving_dim(g: Gen):
    """A shape with an even dim (mostly; dim == rank 5% of the time), that dim, the shape with it halved."""
    r = g.rng
    shape = g.shape(lo=1)
    nd = len(shape)
    dim = r.randrange(-nd, nd) if r.random() < 0.95 else nd
    if r.random() < 0.9 and dim < nd:
        shape[dim] = 2 * max(1, shape[dim] // 2)
    half = list(shape)
    if dim < nd:
        half[dim] //= 2
    return shape, dim, half


def build_glu(g: Gen) -> dict:
    """Glu(Backward): self with an even dim (mostly), out / gradOut of self's shape with that dim halved."""
    r = g.rng
    shape, dim, half = _halving_dim(g)
    dt = g.dtype((0, 0, 1, 27, 11)) if r.random() < 0.9 else g.dtype()
    if "Backward" in g.op:
        return {"gradOut": g.tensor(dt, half), "self": g.tensor(dt, shape), "dim": dim, "out": g.out(dt, shape)}
    return {"self": g.tensor(dt, shape), "dim": dim, "out": g.out(dt if r.random() < 0.9 else g.dtype(), half)}


def build_eye(g: Gen) -> dict:
    """Eye: n, m mostly small and not negative, out [n, m] (sometimes another shape)."""
    r = g.rng
    n, m = r.choice((0, 1, 2, 3, 5, 8)), r.choice((0, 1, 3, 4, 7))
    if r.random() < 0.05:
        n = -1
    return {"n": n, "m": m, "out": g.out(g.dtype((0, 1, 27, 3, 9, 12, 2, 4, 6)) if r.random() < 0.9 else g.dtype(),
                                       [max(n, 0), m] if r.random() < 0.9 else g.shape())}


def build_one_hot(g: Gen) -> dict:
    """OneHot: INT64/INT32 indices in [-1, numClasses], one-element on/off values of out's dtype, axis -1 mostly."""
    r = g.rng
    shape = g.shape(hi=3)
    depth = r.choice((1, 2, 4, 6)) if r.random() < 0.95 else r.choice((0, -2))
    axis = -1 if r.random() < 0.6 else r.randint(-1, len(shape)) if r.random() < 0.95 else len(shape) + 1
    vdt = g.dtype((9, 3, 0, 1)) if r.random() < 0.9 else g.dtype()
    d = len(shape) if axis < 0 else min(axis, len(shape))
    oshape = shape[:d] + [max(depth, 0)] + shape[d:]
    idt = g.dtype((9, 9, 3, 4)) if r.random() < 0.95 else g.dtype()
    return {"self": g.tensor(idt, shape, fill={"m": "int", "s": g.seed(), "lo": -1, "hi": max(depth, 1) + 1}),
            "numClasses": depth, "onValue": g.tensor(vdt, [1]), "offValue": g.tensor(vdt, [1]), "axis": axis,
            "out": g.out(vdt, oshape)}


def build_baddbmm(g: Gen) -> dict:
    """Baddbmm: batch1 [b, m, k], batch2 [b, k, n], self broadcasting to [b, m, n], FLOAT/FLOAT16/BF16."""
    r = g.rng
    b, m, k, n = r.choice((1, 2, 3)), r.choice((1, 2, 4)), r.choice((1, 3, 5)), r.choice((1, 2, 3))
    dt = g.dtype((0, 0, 1, 27)) if r.random() < 0.9 else g.dtype()
    fill = lambda: g.fill(dt, r.choice(("small", "normal")))
    return {"self": g.tensor(dt, g.bcast([b, m, n])), "batch1": g.tensor(dt, [b, m, k], fill=fill()),
            "batch2": g.tensor(dt, [b, k, n], fill=fill()), "beta": g.scalar(r.choice((0, 0, 11))),
            "alpha": g.scalar(r.choice((0, 0, 11))), "out": g.out(dt, [b, m, n] if r.random() < 0.9 else g.shape()),
            "cubeMathType": r.choice((0, 1, 0))}


def build_l1_loss(g: Gen) -> dict:
    """L1Loss(Backward): self and target broadcast-compatible, mostly one float dtype (INT64 at times)."""
    r = g.rng
    shape = g.shape()
    dt = g.dtype((0, 0, 1, 27, 9)) if r.random() < 0.9 else g.dtype()
    red = r.choice((0, 1, 2)) if r.random() < 0.95 else r.choice((-1, 3))
    args = {"self": g.tensor(dt, g.bcast(shape)), "target": g.tensor(dt if r.random() < 0.85 else g.dtype(), g.bcast(shape)),
            "reduction": red}
    if "Backward" in g.op:
        return {"gradOutput": g.tensor(dt, g.bcast(shape) if r.random() < 0.6 else []), **args,
                "gradInput": g.out(dt, shape if r.random() < 0.9 else g.shape())}
    return {**args, "out": g.out(dt, (shape if red == 0 else []) if r.random() < 0.9 else g.shape())}


def build_unique2(g: Gen) -> dict:
    """Unique2: small integer-valued self (repeats), valueOut of self's element count, inverse/counts INT64."""
    r = g.rng
    shape = g.shape()
    n = 1
    for d in shape:
        n *= d
    dt = g.dtype((0, 1, 27, 9, 3, 4, 12, 11)) if r.random() < 0.9 else g.dtype()
    ri, rc = r.random() < 0.5, r.random() < 0.5
    return {"self": g.tensor(dt, shape, fill={"m": "int", "s": g.seed(), "lo": -3, "hi": 4}), "sorted": r.random() < 0.8,
            "returnInverse": ri, "returnCounts": rc, "valueOut": g.out(dt, [n]),
            "inverseOut": g.out(9 if r.random() < 0.95 else 3, shape if ri or rc else [0]),
            "countsOut": g.out(9, [n] if rc else [0])}


def build_aminmax(g: Gen) -> dict:
    """Aminmax: self, one dim (mostly) or a list of them, minOut / maxOut of self's dtype and the reduced shape."""
    r = g.rng
    shape = g.shape(zero=0.03)
    nd = len(shape)
    dims = [r.randrange(-nd, nd) if nd else r.choice((0, -1))] if r.random() < 0.7 else sorted(r.sample(range(nd), r.randint(0, nd)))
    keep = r.random() < 0.5
    oshape = _reduce_shape(shape, dims or list(range(nd)), keep) if nd else []
    dt = g.dtype()
    return {"self": g.tensor(dt, shape), "dim": {"ia": dims}, "keepDim": keep, "minOut": g.out(dt, oshape),
            "maxOut": g.out(dt if r.random() < 0.95 else g.dtype(), oshape)}


def build_kthvalue(g: Gen) -> dict:
    """Kthvalue: self, k in [1, the dim's size] mostly, dim, keepdim, values of self's dtype, INT64 indices."""
    r = g.rng
    shape = g.shape(zero=0.03)
    nd = len(shape)
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    size = shape[dim] if nd else 1
    k = r.randint(1, max(size, 1)) if r.random() < 0.9 else r.choice((0, size + 1))
    keep = r.random() < 0.5
    oshape = _reduce_shape(shape, [dim], keep) if nd else []
    dt = g.dtype((0, 1, 27, 3, 9, 2, 4, 6)) if r.random() < 0.9 else g.dtype()
    return {"self": g.tensor(dt, shape, fill=g.fill(dt, r.choice(("small", "normal", "raw")))), "k": k, "dim": dim,
            "keepdim": keep, "valuesOut": g.out(dt, oshape), "indicesOut": g.out(9 if r.random() < 0.95 else 3, oshape)}


def build_median(g: Gen) -> dict:
    """Median(Dim): self (NaNs at times), dim and keepDim, valuesOut of self's dtype and the reduced shape."""
    r = g.rng
    shape = g.shape(zero=0.03)
    nd = len(shape)
    dt = g.dtype((0, 1, 27, 3, 9, 2, 4, 6)) if r.random() < 0.9 else g.dtype()
    args = {"self": g.tensor(dt, shape, fill=g.fill(dt, r.choice(("small", "normal", "raw"))))}
    if g.op == "aclnnMedian":
        return {**args, "valuesOut": g.out(dt, [] if r.random() < 0.9 else g.shape())}
    dim = r.randrange(-nd, nd) if nd else r.choice((0, -1))
    keep = r.random() < 0.5
    oshape = _reduce_shape(shape, [dim], keep) if nd else []
    return {**args, "dim": dim, "keepDim": keep, "valuesOut": g.out(dt, oshape),
            "indicesOut": g.out(9 if r.random() < 0.95 else 3, oshape)}


BUILDERS.update({"aclnnUnique2": build_unique2, "aclnnAminmax": build_aminmax, "aclnnKthvalue": build_kthvalue,
                 "aclnnMedian": build_median, "aclnnMedianDim": build_median})
BUILDERS.update({"aclnnGlu": build_glu, "aclnnGluBackward": build_glu, "aclnnEye": build_eye, "aclnnOneHot": build_one_hot,
                 "aclnnBaddbmm": build_baddbmm, "aclnnArgMin": build_dim_reduce, "aclnnL1Loss": build_l1_loss,
                 "aclnnL1LossBackward": build_l1_loss})
# ---- aclnnNpuFormatCast: public <-> private layouts (the storage dims are the layout's) -------------------------

def build_npu_format_cast(g: Gen) -> dict:
    """ND <-> FRACTAL_NZ (C0 = 32 bytes of the dtype, or 16 as FRACTAL_NZ_C0_16 for 4-byte types) most of the
    time, else NCHW / NCDHW <-> NC1HWC0 / FRACTAL_Z / NDC1HWC0 / FRACTAL_Z_3D (A2 pairs; Ascend 950 refuses)."""
    r = g.rng
    dt = r.choice((1, 1, 27, 2, 0, 0, 3, 4, 8)) if r.random() < 0.95 else g.dtype()
    size = ITEMSIZE.get(dt, 1)
    c0, fmt = 32 // size if size <= 32 else 1, 29
    if size == 4 and r.random() < 0.4:
        c0, fmt = 16, 50

    def ceil(a, b):
        return -(-a // b)
    if r.random() < 0.7:
        shape = [r.randint(1, 3) for _ in range(r.choice((0, 0, 1)))] + [r.randint(2, 40), r.randint(1, 70)]
        store = shape[:-2] + [ceil(shape[-1], c0), ceil(shape[-2], 16), 16, c0]
        pub_fmt = 2
    else:
        five = r.random() < 0.4
        shape = [r.randint(1, 20), r.randint(1, 20)] + [r.randint(1, 3) for _ in range(3 if five else 2)]
        n, c, *rest = shape
        fmt = r.choice((32, 33) if five else (3, 4))
        d, (h, w) = (rest[0] if five else 1), rest[-2:]
        if fmt in (3, 32):
            store = [n] + ([d] if five else []) + [ceil(c, c0), h, w, c0]
        else:
            store = [d * ceil(c, c0) * h * w, ceil(n, 16), 16, c0]
        pub_fmt = 30 if five else 0
    if r.random() < 0.05:
        store[-1] += 1                                     # a storage that is not the layout
    pub = g.tensor(dt, shape, fmt=pub_fmt, layout=r.random() < 0.05)
    prv = g.tensor(dt, shape, fmt=fmt, layout=False)
    prv["ss"] = store
    prv["n"] = max(_extent(store, None, 0) * size, 1)
    if r.random() < 0.5:
        return {"srcTensor": pub, "dstTensor": {**prv, "fill": {"m": "pat", "b": 0xA5}}}
    return {"srcTensor": {**prv, "fill": g.fill(dt)}, "dstTensor": g.out(dt, shape, fmt=pub_fmt)}


BUILDERS["aclnnNpuFormatCast"] = build_npu_format_cast


# ---- the fused operators: RMS norms, SwiGlu, rotary embeddings (issue 22) -----------------------------------------

def build_rms_norm(g: Gen) -> dict:
    """RmsNorm / GemmaRmsNorm / RmsNormGrad / AddRmsNorm / InplaceAddRmsNorm: x [lead.., n], gamma the trailing dims
    (mostly [n]), rstd the leading dims with 1s; FLOAT16 / BF16 / FLOAT (gamma FLOAT with a 16-bit x sometimes)."""
    r = g.rng
    lead = [r.choice((1, 2, 3, 4))] + ([r.choice((1, 2, 3))] if r.random() < 0.4 else [])
    n = r.choice((8, 16, 7, 32, 5))
    x = lead + [n]
    two = r.random() < 0.15 and len(lead) == 2
    gshape = x[-2:] if two else [n]
    rshape = x[:len(x) - len(gshape)] + [1] * len(gshape)
    dt = r.choice((0, 1, 27)) if r.random() < 0.95 else g.dtype()
    gdt = 0 if r.random() < 0.25 else dt
    op, eps = g.op, r.choice((1e-6, 1e-5, 0.0, 1e-6))
    gamma = g.tensor(gdt, gshape, fill=g.fill(gdt, "pos"))
    if op.endswith("RmsNormGrad"):
        return {"dy": g.tensor(dt, x), "x": g.tensor(dt, x), "rstd": g.tensor(0, rshape, fill=g.fill(0, "pos")),
                "gamma": gamma, "dxOut": g.out(dt, x), "dgammaOut": g.out(0, gshape)}
    if op.endswith("InplaceAddRmsNorm"):
        return {"x1Ref": g.tensor(dt, x), "x2Ref": g.tensor(dt, x), "gamma": g.tensor(dt, gshape), "epsilon": eps,
                "rstdOut": g.out(0, rshape)}
    if op.endswith("AddRmsNorm"):
        mode = r.random()
        return {"x1": g.tensor(dt, x), "x2": g.tensor(dt, x), "gamma": g.tensor(dt, gshape), "epsilon": eps,
                "yOut": g.out(dt, x), "rstdOut": g.out(0, rshape) if mode < 0.7 else None,
                "xOut": g.out(dt, x) if mode < 0.85 else None}
    return {"x": g.tensor(dt, x), "gamma": gamma if not op.endswith("GemmaRmsNorm") else g.tensor(dt, gshape),
            "epsilon": eps, "yOut": g.out(dt, x), "rstdOut": g.out(0, rshape)}


def build_swi_glu(g: Gen) -> dict:
    """SwiGlu(Grad): x with an even dim (mostly), out / yGrad with that dim halved; FLOAT16 / BF16 / FLOAT."""
    r = g.rng
    shape, dim, half = _halving_dim(g)
    dt = r.choice((0, 1, 27)) if r.random() < 0.95 else g.dtype()
    if g.op.endswith("Grad"):
        return {"yGrad": g.tensor(dt, half), "x": g.tensor(dt, shape), "dim": dim, "out": g.out(dt, shape)}
    return {"x": g.tensor(dt, shape), "dim": dim, "out": g.out(dt, half)}


def build_rope(g: Gen) -> dict:
    """RotaryPositionEmbedding(Grad): x [B, S, N, D] (D even, mostly a multiple of 4), cos / sin x's shape with some
    leading dims 1; mode 0-3 (mostly 0, 1)."""
    r = g.rng
    b, s, n = r.choice((1, 2)), r.choice((1, 3)), r.choice((1, 2, 4))
    d = r.choice((8, 16, 4, 6))
    x = [b, s, n, d]
    c = [b if r.random() < 0.5 else 1, s if r.random() < 0.7 else 1, n if r.random() < 0.3 else 1, d]
    dt = r.choice((0, 1, 27)) if r.random() < 0.95 else g.dtype()
    mode = r.choice((0, 1, 0, 1, 2, 3)) if r.random() < 0.95 else r.choice((4, -1))
    cos, sin = g.tensor(dt, c, fill=g.fill(dt, "small")), g.tensor(dt, c, fill=g.fill(dt, "small"))
    if g.op.endswith("Grad"):
        return {"dy": g.tensor(dt, x), "cos": cos, "sin": sin, "xOptional": g.tensor(dt, x) if r.random() < 0.8 else None,
                "mode": mode, "dxOut": g.out(dt, x), "dcosOut": g.out(dt, c), "dsinOut": g.out(dt, c)}
    return {"x": g.tensor(dt, x), "cos": cos, "sin": sin, "mode": mode, "out": g.out(dt, x)}


def build_arpe(g: Gen) -> dict:
    """ApplyRotaryPosEmb(V2): query [B, S, Nq, D], key [B, S, Nk, D], cos / sin [B, S, 1, D] in layout 1 mostly
    (D 128 half the time: Atlas A2's only size), the others' shapes for layouts 2-4; rotaryMode half / quarter /
    interleave."""
    r = g.rng
    layout = 1 if r.random() < 0.6 else r.choice((2, 3, 4, 5))
    d = 128 if r.random() < 0.5 else r.choice((8, 16))
    b, s, nq, nk = r.choice((1, 2)), r.choice((1, 3)), r.choice((1, 2, 4)), r.choice((1, 2))
    q, k, c = {1: ([b, s, nq, d], [b, s, nk, d], [b, s, 1, d]), 2: ([s, b, nq, d], [s, b, nk, d], [s, b, 1, d]),
               3: ([b, nq, s, d], [b, nk, s, d], [b, 1, s, d]), 4: ([s, nq, d], [s, nk, d], [s, 1, d]),
               5: ([b, s, nq, d], [b, s, nk, d], [b, s, 1, d])}[layout]
    dt = r.choice((0, 1, 27)) if r.random() < 0.95 else g.dtype()
    args = {"queryRef": g.tensor(dt, q), "keyRef": g.tensor(dt, k), "cos": g.tensor(dt, c, fill=g.fill(dt, "small")),
            "sin": g.tensor(dt, c, fill=g.fill(dt, "small")), "layout": layout}
    if g.op.endswith("V2"):
        args["rotaryMode"] = r.choice(("half", "quarter", "interleave", "half")) if r.random() < 0.95 else "rope"
    return args


def build_interleave_rope(g: Gen) -> dict:
    """InterleaveRope: x (B, N, S, D), D 64 mostly (Atlas A2's only size), cos / sin (B, 1, S or 1, D)."""
    r = g.rng
    b, n, s = r.choice((1, 2)), r.choice((1, 2, 3)), r.choice((1, 4))
    d = 64 if r.random() < 0.7 else r.choice((16, 8, 32))
    c = [b, 1 if r.random() < 0.9 else n, s if r.random() < 0.6 else 1, d]
    dt = r.choice((1, 27, 1, 27, 0)) if r.random() < 0.95 else g.dtype()
    return {"x": g.tensor(dt, [b, n, s, d]), "cos": g.tensor(dt, c, fill=g.fill(dt, "small")),
            "sin": g.tensor(dt, c, fill=g.fill(dt, "small")), "out": g.out(dt, [b, n, s, d])}


BUILDERS.update({op: build_rms_norm for op in (
    "aclnnRmsNorm", "aclnnGemmaRmsNorm", "aclnnRmsNormGrad", "aclnnAddRmsNorm", "aclnnInplaceAddRmsNorm")})


def build_deep_norm(g: Gen) -> dict:
    """DeepNorm(Grad): x / gx [lead.., n] (2-3 dims), gamma / beta the trailing dim (sometimes two), mean / rstd the
    leading dims with 1s; one dtype of FLOAT16 / BF16 / FLOAT for x, gx, beta, gamma, y (mostly)."""
    r = g.rng
    lead = [r.choice((1, 2, 3, 4))] + ([r.choice((1, 2, 3))] if r.random() < 0.4 else [])
    x = lead + [r.choice((8, 16, 7, 32, 5))]
    gshape = x[-2:] if r.random() < 0.15 and len(lead) == 2 else x[-1:]
    sshape = x[:len(x) - len(gshape)] + [1] * len(gshape)
    dt = r.choice((0, 1, 27)) if r.random() < 0.95 else g.dtype()
    alpha = r.choice((0.3, 1.0, 0.87, 2.0))
    gamma = g.tensor(dt, gshape, fill=g.fill(dt, "pos"))
    if g.op.endswith("Grad"):
        return {"dy": g.tensor(dt, x), "x": g.tensor(dt, x), "gx": g.tensor(dt, x), "gamma": gamma,
                "mean": g.tensor(0, sshape), "rstd": g.tensor(0, sshape, fill=g.fill(0, "pos")), "alpha": alpha,
                "dxOut": g.out(dt, x), "dgxOut": g.out(dt, x), "dbetaOut": g.out(0, gshape), "dgammaOut": g.out(0, gshape)}
    return {"x": g.tensor(dt, x), "gx": g.tensor(dt, x), "beta": g.tensor(dt, gshape), "gamma": gamma, "alpha": alpha,
            "epsilon": r.choice((1e-6, 1e-5, 0.0)), "meanOut": g.out(0, sshape), "rstdOut": g.out(0, sshape),
            "yOut": g.out(dt, x)}


BUILDERS.update({"aclnnDeepNorm": build_deep_norm, "aclnnDeepNormGrad": build_deep_norm})
def build_fused_infer_attention(g: Gen) -> dict:
    """FusedInferAttentionScoreV2-V5: FLOAT16/BF16 q/k/v in BSH / BSND / BNSD (decode mostly), GQA, the paged cache
    at times (block table of distinct ids, per-batch kv lengths; BnNBsD for BNSD), a bool mask or the causal
    compressed one (sparseMode 3), softmaxLse sometimes."""
    r = g.rng
    dt = r.choice((1, 27, 1, 27, 0)) if r.random() < 0.95 else g.dtype()
    layout = r.choice(("BSH", "BSND", "BNSD"))
    b, n2, grp, d = r.randint(1, 2), r.randint(1, 2), r.choice((1, 2)), r.choice((8, 16))
    n1 = n2 * grp
    s1, s2 = r.choice((1, 1, r.randint(2, 6))), r.randint(1, 20)

    def lay(bb, s, n):
        return {"BSH": [bb, s, n * d], "BSND": [bb, s, n, d], "BNSD": [bb, n, s, d]}[layout]
    qs = lay(b, s1, n1)
    args = {"query": g.tensor(dt, qs), "attentionOut": g.out(dt, qs), "numHeads": n1,
            "scaleValue": r.choice((0.25, 0.125)), "preTokens": 2 ** 31 - 1, "nextTokens": 2 ** 31 - 1,
            "inputLayout": layout, "numKeyValueHeads": n2 if r.random() < 0.7 else 0 if grp == 1 else n2,
            "sparseMode": 0, "innerPrecise": r.choice((0, 1, 2)), "blockSize": 0, "antiquantMode": 0,
            "keyAntiquantMode": 0, "valueAntiquantMode": 0, "queryQuantMode": 0, "pseType": 0}
    if r.random() < 0.5:
        bs = 16
        per = -(-s2 // bs)
        blocks = b * per + 1
        ids = list(range(blocks))
        r.shuffle(ids)
        cache = [blocks, n2, bs, d] if layout == "BNSD" and r.random() < 0.5 else [blocks, bs, n2 * d]
        args.update({"key": {"list": [g.tensor(dt, cache, layout=False)]},
                     "value": {"list": [g.tensor(dt, cache, layout=False)]},
                     "blockTableOptional": g.tensor(3, [b, per], fill={"m": "list", "v": ids[:b * per]}, layout=False),
                     "blockSize": bs, "actualSeqLengthsKvOptional": {"ia": [r.randint(0, s2) for _ in range(b)]}})
    else:
        ks = lay(b, s2, n2)
        args.update({"key": {"list": [g.tensor(dt, ks)]}, "value": {"list": [g.tensor(dt, ks)]}})
        if r.random() < 0.4:
            args["actualSeqLengthsKvOptional"] = {"ia": [r.randint(0, s2) for _ in range(b)]}
    if r.random() < 0.3 and s1 > 1:
        args["actualSeqLengthsOptional"] = {"ia": [r.randint(0, s1) for _ in range(b)]}
    x = r.random()
    if x < 0.2:
        args["attenMaskOptional"] = g.tensor(12, [b, 1, s1, s2] if s1 > 1 else [b, s2], fill={"m": "bits", "s": g.seed()})
    elif x < 0.35 and s1 > 1:
        args["sparseMode"] = 3
        args["attenMaskOptional"] = g.tensor(12, [2048, 2048], fill={"m": "bits", "s": g.seed()}, layout=False)
    lse = r.random() < 0.5
    args["softmaxLseFlag"] = lse
    args["softmaxLse"] = g.out(0, [b, n1, s1, 1] if lse else [0])
    for p in g.inp:                     # quantisation, padding, prefix, rope, sink: NULL
        if p[0] not in args and p[1] in ("tensor", "int_array"):
            args[p[0]] = None
    return {k: v for k, v in args.items() if k in {p[0] for p in g.inp}}


def build_scatter_pa_kv_cache(g: Gen) -> dict:
    """ScatterPaKvCache: key/value [tokens, N, D] of one dtype (FLOAT16 / BF16 / INT8 mostly), caches Norm
    [blocks, blockSize, N, D] or PA_NZ [blocks, N * D / L, blockSize, L], distinct slots with some -1."""
    r = g.rng
    dt = r.choice((1, 27, 2, 1, 27)) if r.random() < 0.95 else g.dtype()
    tokens, heads, kh, bs = r.randint(1, 6), r.randint(1, 2), r.choice((16, 32)), r.choice((4, 8, 16))
    blocks = -(-tokens // bs) + r.randint(0, 2)
    slots = list(range(blocks * bs))
    r.shuffle(slots)
    slots = [x if r.random() > 0.15 else -1 for x in slots[:tokens]]
    nz = r.random() < 0.4
    last = 32 // ITEMSIZE.get(dt, 2) if ITEMSIZE.get(dt, 2) <= 32 else 1
    cache = [blocks, heads * kh // last, bs, last] if nz else [blocks, bs, heads, kh]
    return {"key": g.tensor(dt, [tokens, heads, kh]), "value": g.tensor(dt, [tokens, heads, kh]),
            "keyCacheRef": g.tensor(dt, cache, layout=False), "valueCacheRef": g.tensor(dt, cache, layout=False),
            "slotMapping": g.tensor(r.choice((3, 9)), [tokens], fill={"m": "list", "v": slots}, layout=False),
            "compressLensOptional": None, "compressSeqOffsetOptional": None, "seqLensOptional": None,
            "cacheModeOptional": "PA_NZ" if nz else r.choice(("Norm", None)), "scatterModeOptional": r.choice(("None", None)),
            "stridesOptional": None, "offsetsOptional": None}


def build_incre_prompt_flash_attention(g: Gen) -> dict:
    """IncreFlashAttentionV4 (decode: Q_S = 1, its actualSeqLengths the kv lengths, blocktable) and
    PromptFlashAttentionV3 (key / value tensors, no cache): FusedInferAttentionScore's calls renamed."""
    ifa = "Incre" in g.op
    g_inp = g.inp
    g.inp = [p for p in g_inp] + [[n, "tensor"] for n in ("attenMaskOptional", "blockTableOptional")] + \
        [[n, "int_array"] for n in ("actualSeqLengthsOptional", "actualSeqLengthsKvOptional")] + \
        [[n, "x"] for n in ("softmaxLseFlag", "softmaxLse", "sparseMode", "blockSize")]
    try:
        args = build_fused_infer_attention(g)
    finally:
        g.inp = g_inp
    if ifa:   # one query position
        q = args["query"]
        q["sh"][2 if args["inputLayout"] == "BNSD" else 1] = 1
        args["query"] = _resize(g, q, shape=q["sh"])
        args["attentionOut"] = g.out(q["d"], q["sh"])
        args["attenMask"] = None
        args["actualSeqLengths"] = args.pop("actualSeqLengthsKvOptional", None)
        args["blocktable"] = args.pop("blockTableOptional", None)
    else:
        args["key"], args["value"] = args["key"]["list"][0], args["value"]["list"][0]
        if args.get("blockTableOptional") is not None:   # no cache here: key / value of the query's shape
            q = args["query"]
            args["key"], args["value"] = g.tensor(q["d"], list(q["sh"])), g.tensor(q["d"], list(q["sh"]))
            args["numKeyValueHeads"] = 0
        args["attenMask"] = args.pop("attenMaskOptional", None)
        args["actualSeqLengths"] = args.pop("actualSeqLengthsOptional", None)
        args["actualSeqLengthsKv"] = None
    names = {p[0] for p in g.inp}
    for p in g.inp:
        if p[0] not in args and p[1] in ("tensor", "int_array"):
            args[p[0]] = None
    return {k: v for k, v in args.items() if k in names}


BUILDERS.update({f"aclnnFusedInferAttentionScoreV{v}": build_fused_infer_attention for v in (2, 3, 4, 5)})
BUILDERS.update({"aclnnIncreFlashAttentionV4": build_incre_prompt_flash_attention,
                 "aclnnPromptFlashAttentionV3": build_incre_prompt_flash_attention})
BUILDERS["aclnnScatterPaKvCache"] = build_scatter_pa_kv_cache


def build_kv_rms_norm_rope_cache(g: Gen) -> dict:
    """KvRmsNormRopeCache: kv [B, 1, S, Dv + Dk] (Dv 512, Dk 64 mostly: Atlas A2's only sizes), gamma [Dv], cos / sin
    [B, 1, S or 1, Dk], caches Norm [B, 1, Sc, D] with index [B, S] in [-1, Sc), or paged [blocks, 16, 1, D] with
    distinct slots [B * S] (PA, PA_BNSD, PA_NZ) or page starts [B] (PA_BLK_BNSD, PA_BLK_NZ), isOutputKv either way;
    FLOAT16 / BF16 mostly."""
    r = g.rng
    dt = r.choice((1, 27)) if r.random() < 0.95 else g.dtype()
    b, s = r.randint(1, 3), r.randint(1, 3)
    dv, dk = (512, 64) if r.random() < 0.7 else r.choice(((128, 32), (256, 64), (512, 32)))
    cs = s if r.random() < 0.5 else 1
    mode = r.choice(("Norm", "PA", "PA_BNSD", "PA_NZ", None, "PA_BLK_BNSD", "PA_BLK_NZ"))
    if mode in ("Norm", None):
        sc = s + r.randint(0, 2)
        kshape, vshape, ishape = [b, 1, sc, dk], [b, 1, sc, dv], [b, s]
        slots = [x for _ in range(b) for x in r.sample(range(sc), s)]
    elif mode.startswith("PA_BLK"):   # one page start per batch (S <= 16)
        blocks = b + r.randint(0, 1)
        kshape, vshape, ishape = [blocks, 16, 1, dk], [blocks, 16, 1, dv], [b]
        slots = [x * 16 for x in r.sample(range(blocks), b)]
    else:
        blocks = -(-(b * s) // 16) + r.randint(0, 1)
        kshape, vshape, ishape = [blocks, 16, 1, dk], [blocks, 16, 1, dv], [b * s]
        slots = r.sample(range(blocks * 16), b * s)
    slots = [x if r.random() > 0.15 else -1 for x in slots]
    small = g.fill(dt, "small")
    return {"kv": g.tensor(dt, [b, 1, s, dv + dk]), "gamma": g.tensor(dt, [dv]),
            "cos": g.tensor(dt, [b, 1, cs, dk], fill=small), "sin": g.tensor(dt, [b, 1, cs, dk], fill=small),
            "index": g.tensor(9, ishape, fill={"m": "list", "v": slots}, layout=False),
            "kCacheRef": g.tensor(dt, kshape, layout=False), "ckvCacheRef": g.tensor(dt, vshape, layout=False),
            "kRopeScaleOptional": None, "cKvScaleOptional": None, "kRopeOffsetOptional": None,
            "cKvOffsetOptional": None, "epsilon": r.choice((1e-5, 1e-6)), "cacheModeOptional": mode,
            "isOutputKv": r.random() < 0.5, "kRopeOut": g.out(dt, [b, 1, s, dk]), "cKvOut": g.out(dt, [b, 1, s, dv])}


BUILDERS["aclnnKvRmsNormRopeCache"] = build_kv_rms_norm_rope_cache
BUILDERS.update({"aclnnSwiGlu": build_swi_glu, "aclnnSwiGluGrad": build_swi_glu,
                 "aclnnRotaryPositionEmbedding": build_rope, "aclnnRotaryPositionEmbeddingGrad": build_rope,
                 "aclnnApplyRotaryPosEmb": build_arpe, "aclnnApplyRotaryPosEmbV2": build_arpe,
                 "aclnnInterleaveRope": build_interleave_rope})


def builder_for(op: str):
    if op in BUILDERS:
        return BUILDERS[op]
    if op.startswith("aclnnForeach"):
        return build_foreach
    return build_elementwise


def generic_value(g: Gen, p: list):
    """A value for a parameter no builder filled."""
    r = g.rng
    kind = p[1]
    if kind == "tensor":
        if p[4] and r.random() < 0.5:
            return None
        return (g.out if p[3] == "out" else g.tensor)(g.dtype(), g.shape())
    if kind == "tensor_list":
        return {"list": [g.tensor(g.dtype(), g.shape()) for _ in range(r.randint(0, 3))]}
    if kind == "scalar":
        return g.scalar()
    if kind == "scalar_list":
        return {"slist": [g.scalar() for _ in range(r.randint(0, 3))]}
    if kind == "int_array":
        return {"ia": [r.randint(-2, 3) for _ in range(r.randint(0, 3))]}
    if kind == "bool_array":
        return {"ba": [r.random() < 0.5 for _ in range(r.randint(0, 3))]}
    if kind == "float_array":
        return {"fa": [round(r.uniform(-2, 2), 2) for _ in range(r.randint(0, 3))]}
    if kind in ("double", "float"):
        return g.double()
    if kind == "int":
        return r.choice((0, 1, 2, -1))
    if kind == "bool":
        return r.random() < 0.5
    if kind == "dtype":
        return g.dtype()
    if kind == "string":
        return r.choice(("none", "tanh", "mean", "sum", "rint", "floor", "round", "trunc"))
    raise ValueError(f"{g.op}: no generator for parameter kind {kind!r}")


POINTER_KINDS = ("tensor", "tensor_list", "scalar", "scalar_list", "int_array", "bool_array", "float_array", "string")
INT64_EDGES = (2 ** 62, 2 ** 63 - 1, -2 ** 63, -2 ** 62 - 1, 2 ** 32 + 1)
INT_RANGES = {"int8_t": (-128, 127), "int": (-2 ** 31, 2 ** 31 - 1), "int32_t": (-2 ** 31, 2 ** 31 - 1),
              "int64_t": (-2 ** 63, 2 ** 63 - 1), "uint64_t": (0, 2 ** 64 - 1)}


def valid_call(g: Gen) -> list:
    values = builder_for(g.op)(g)
    args = []
    for p in g.inp:
        args.append(values[p[0]] if p[0] in values else generic_value(g, p))
    return args


def _tensor_positions(args: list) -> list:
    """(argno, None) for tensor args and (argno, j) for list items that are full tensor specs."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, dict) and "sh" in a and "as" not in a:
            out.append((i, None))
        elif isinstance(a, dict) and "list" in a:
            out.extend((i, j) for j, t in enumerate(a["list"]) if t and "sh" in t)
    return out


def _get(args, pos):
    i, j = pos
    return args[i] if j is None else args[i]["list"][j]


def _set(args, pos, value):
    i, j = pos
    if j is None:
        args[i] = value
    else:
        args[i]["list"][j] = value


def _resize(g: Gen, t: dict, dtype=None, shape=None, fmt=None) -> dict:
    """The same tensor with another dtype / shape / format (contiguous, fresh memory and fill)."""
    d = t["d"] if dtype is None else dtype
    sh = t["sh"] if shape is None else shape
    out = t["fill"].get("m") == "pat"
    return g.tensor(d, sh, out=out, layout=False, fmt=fmt or t.get("f", ND),
                    fill=None if out else g.fill(d))


def mutate(g: Gen, args: list, what: str | None = None, pos=None) -> tuple[list, dict]:
    """An invalid variant of a call: one argument made wrong (`what` and the tensor position `pos` /
    argument index are drawn when not given)."""
    r = g.rng
    args = json.loads(json.dumps(args))
    extra = {}
    tpos = _tensor_positions(args)
    if what is None:
        kinds = ["dtype", "shape", "rank9", "attr", "format", "extra_dim", "null", "view"]
        weights = [3, 3, 1, 3, 1, 1, 1, 1]
        what = r.choices(kinds, weights)[0]
    if what in ("dtype", "shape", "rank9", "format", "extra_dim", "view") and tpos:
        pos = pos if pos is not None else r.choice(tpos)
        t = _get(args, pos)
        if what == "view":       # a view outside its memory, negative strides, or a huge dimension
            t = dict(t)
            x = r.randrange(4)
            if x == 0:
                t["o"] = t.get("o", 0) + max(t["n"] // ITEMSIZE[t["d"]], 1)
            elif x == 1 and t["sh"]:
                st = t.get("st") or _contig(t["sh"])
                t["st"] = [-v for v in st]
                t["o"] = t.get("o", 0) + sum((d - 1) * v for d, v in zip(t["sh"], st) if d > 0)
            elif x == 2:
                t["sh"] = list(t["sh"]) + [r.choice((2 ** 31, 2 ** 40, 2 ** 62))]
                t.pop("st", None)
            else:
                t["o"] = r.choice((-1, -(2 ** 40), 2 ** 61))
            t["ss"] = t.get("ss", t["sh"]) if x != 2 else [1]
            _set(args, pos, t)
        elif what == "dtype":
            d = r.choice([x for x in ITEMSIZE if x != t["d"]])
            _set(args, pos, _resize(g, t, dtype=d))
        elif what == "shape":
            sh = list(t["sh"])
            if sh and r.random() < 0.7:
                k = r.randrange(len(sh))
                sh[k] = r.choice((sh[k] + 1, max(sh[k] - 1, 0), sh[k] * 2 + 1, 0))
                if sh == t["sh"]:
                    sh[k] += 1
            elif sh:
                sh = sh[1:]
            else:
                sh = [2]
            _set(args, pos, _resize(g, t, shape=sh))
        elif what == "rank9":
            sh = [1] * max(9 - len(t["sh"]), 1) + list(t["sh"])
            if r.random() < 0.2:
                sh = [1] * 26
            _set(args, pos, _resize(g, t, shape=sh))
        elif what == "extra_dim":
            _set(args, pos, _resize(g, t, shape=list(t["sh"]) + [r.choice((1, 2))]))
        else:
            _set(args, pos, _resize(g, t, fmt=r.choice((NCHW, NHWC, NZ, 47, 3, -1))))
        return args, extra
    attrs = [i for i, p in enumerate(g.inp) if p[1] not in ("tensor", "tensor_list")]
    if what == "attr" and attrs:
        i = pos if pos is not None else r.choice(attrs)
        p = g.inp[i]
        kind = p[1]
        if kind == "int":
            lo, hi = INT_RANGES.get(p[2].replace("const ", ""), (-2 ** 31, 2 ** 31 - 1))
            pool = (-1, -2, 3, 7, 64, 100, -100, 2 ** 31 - 1, lo, hi, 0, 40, 36) + (INT64_EDGES if g.salt else ())
            args[i] = r.choice([v for v in pool if lo <= v <= hi])
        elif kind in ("double", "float"):
            args[i] = r.choice((-1.0, 2.0, math.nan, math.inf, -math.inf, 1e30, -0.5, 0.0))
        elif kind == "bool":
            args[i] = not args[i] if isinstance(args[i], bool) else True
        elif kind == "dtype":
            args[i] = r.choice((-1, 13, 99, 5, 14, 28, 42, 16, 12, 29, 37))
        elif kind == "string":
            args[i] = r.choice(("", "bogus", "NONE", "Tanh", "x" * 200, "rint ", "ceil", "trunc", "mean", "sum"))
        elif kind == "scalar":
            args[i] = g.scalar(r.choice(EXOTIC + (12, 16, 7, 8, 10, 13)) if r.random() < 0.6 else None)
            if args[i]["d"] == 13:
                args[i]["b"] = "00"
        elif kind == "scalar_list":
            items = args[i]["slist"] if isinstance(args[i], dict) else []
            args[i] = {"slist": [g.scalar(r.choice(EXOTIC + (12,))) for _ in items] or [g.scalar()] * 3}
        elif kind == "int_array":
            v = list(args[i]["ia"]) if isinstance(args[i], dict) else []
            choice = r.randrange(5 if g.salt else 4)    # seed 0 (the corpus's own stream) never draws the edges
            if choice == 0:
                v.append(r.choice((9, -9, 100, 2 ** 40)))
            elif choice == 1 and v:
                v.append(v[0])
            elif choice == 2:
                v = v[:-1] if v else [0, 0]
            elif choice == 4 and v:             # one value at the edge of int64: shape arithmetic must not overflow
                v[r.randrange(len(v))] = r.choice(INT64_EDGES)
            else:
                v = [-1] * 9
            args[i] = {"ia": v}
        elif kind == "bool_array":
            v = list(args[i]["ba"]) if isinstance(args[i], dict) else []
            args[i] = {"ba": v[:-1] if v and r.random() < 0.5 else v + [True, False]}
        elif kind == "float_array":
            args[i] = {"fa": [math.nan]}
        return args, extra
    # NULL for a random pointer parameter (optional ones included)
    ptrs = [i for i, p in enumerate(g.inp) if p[1] in POINTER_KINDS]
    if ptrs:
        args[r.choice(ptrs)] = None
    else:
        extra["ne"] = 1
    return args, _fix_refs(args, extra)


def _fix_refs(args, extra):
    """Nulls a 'same' reference whose target became NULL or no tensor (it would be meaningless)."""
    for i, a in enumerate(args):
        if isinstance(a, dict) and "same" in a and not (isinstance(args[a["same"]], dict) and "sh" in args[a["same"]]):
            args[i] = None
        if isinstance(a, dict) and "as" in a and not (isinstance(args[a["as"]], dict) and "n" in args[a["as"]]):
            args[i] = None
    return extra


ADVERSARIAL = ("neg_strides", "neg_strides_raw", "end_offset", "past_end", "huge_dims", "zero_and_huge", "rank25",
               "bcast_out", "big_offset", "alias", "tiny_alloc")


def adversarial_views(g: Gen, args: list, what: str | None = None) -> list:
    """The call with one or two of its tensors (list elements included) given an adversarial layout
    that aclCreateTensor accepts or refuses: negative strides (inside the allocation, or reaching below
    it), the storage offset at the end of the allocation, a view reaching past its allocation, dims
    whose product overflows int64, zero-size dims beside huge ones, 25 dims, a 0-stride (overlapping)
    output, offsets near int64's limits, an output over another argument's memory, a 1-byte allocation."""
    r = g.rng
    args = json.loads(json.dumps(args))
    tpos = _tensor_positions(args)
    if not tpos:
        return args
    for pos in r.sample(tpos, min(len(tpos), r.choice((1, 1, 2)))):
        t = dict(_get(args, pos))
        kind = what or r.choice(ADVERSARIAL)
        isz = ITEMSIZE[t["d"]]
        sh = list(t["sh"])
        st = list(t.get("st") or _contig(sh))
        if kind in ("neg_strides", "neg_strides_raw") and sh:
            t["st"] = [-v if r.random() < 0.7 else v for v in st]
            if kind == "neg_strides":   # the view stays inside its allocation
                t["o"] = t.get("o", 0) + sum((d - 1) * v for d, v in zip(sh, st) if d > 0 and v > 0)
                t["n"] = max(t["n"], (_extent(sh, t["st"], t["o"]) + 1) * isz)
        elif kind == "end_offset":      # the view's first element is the allocation's last (or one past)
            t["o"] = max(t["n"] // isz - r.choice((0, 1)), 0)
            t["sh"] = sh if r.random() < 0.5 else [1] * len(sh)
            t.pop("st", None)
        elif kind == "past_end":        # an allocation smaller than the view
            t["n"] = max(1, t["n"] // r.choice((2, 3, 8)) - r.choice((0, 1)))
        elif kind == "huge_dims":
            big = r.choice((2 ** 31, 2 ** 32, 2 ** 40, 2 ** 60, 2 ** 61, 2 ** 62, 2 ** 63 - 1))
            t["sh"] = (sh or [1]) + [big] if r.random() < 0.5 else [big, r.choice((2, 3, 2 ** 33))]
            if r.random() < 0.15:      # a broadcast view: inside its allocation, so kernels may walk it for long
                t["st"] = [0] * len(t["sh"])
            else:
                t.pop("st", None)
        elif kind == "zero_and_huge":
            t["sh"] = r.choice(([0, 2 ** 40], [2 ** 40, 0, 3], [0, 2 ** 62, 2 ** 62], sh + [0, 2 ** 31], [2 ** 62, 0, 2 ** 62]))
            if r.random() < 0.5:          # NULL strides: aclCreateTensor refuses row-major strides that overflow
                t.pop("st", None)
            else:
                t["st"] = [r.choice((0, 1, 2)) for _ in t["sh"]]
        elif kind == "rank25":
            t["sh"] = [1] * (25 - min(len(sh), 3)) + sh[-3:] if r.random() < 0.7 else [1] * 23 + [2, 3]
            t.pop("st", None)
            t["n"] = max(t["n"], _numel(t["sh"]) * isz)
        elif kind == "bcast_out" and sh:   # 0 strides (an output that addresses one element many times)
            t["st"] = [0 if r.random() < 0.6 else v for v in st]
        elif kind == "big_offset":
            t["o"] = r.choice((2 ** 62, 2 ** 63 - 1, -(2 ** 63), 2 ** 40, 1 - 2 ** 20))
        elif kind == "alias" and len(tpos) > 1:   # a descriptor over another tensor's memory
            other = r.choice([p for p in tpos if p[0] < pos[0] and p[1] is None] or [None])   # built before it
            if other is not None:
                t = {k: v for k, v in t.items() if k not in ("n", "fill")}
                t["as"] = other[0]
        elif kind == "tiny_alloc":
            t["n"] = 1
        if "n" in t and "as" not in t:
            t["ss"] = ([min(max(_extent(t["sh"], t.get("st"), t.get("o", 0)), 1), 2 ** 63 - 1)]
                       if r.random() < 0.8 else t["sh"])
        _set(args, pos, t)
    return args


def generate_random(op: str, params: list, n_calls: int, salt: int = 0, adversarial: float = 0.0) -> list:
    """Random calls of one operator: about 2/3 plausible valid calls, 1/3 with one argument made wrong.
    Deterministic from the operator's name (and `salt`, the fuzz command's seed). With `adversarial`
    > 0, that fraction of the calls instead gets adversarial views (``adversarial_views``)."""
    g = Gen(op, params, salt)
    r = g.rng
    calls = []
    while len(calls) < n_calls:
        a = valid_call(g)
        if adversarial and r.random() < adversarial:
            a = adversarial_views(g, a)
            calls.append({"a": a, **({"rep": 2} if r.random() < 0.05 else {})})
            continue
        x = r.random()
        if x < 0.68:
            call = {"a": a}
            y = r.random()
            if y < 0.04:
                call["rep"] = 2
            elif y < 0.07:
                call["s0"] = 1
            calls.append(call)
        else:
            a, extra = mutate(g, a)
            calls.append({"a": a, **extra})
    return calls


def generate_structural(op: str, params: list, base: list) -> list:
    """Systematic variants of one call `base` (a call that succeeded when recorded): NULL for each
    pointer parameter in turn, NULL workspaceSize / executor, a destroyed tensor for each tensor
    parameter, a NULL element in each tensor list, a wrong dtype / shape / rank for each tensor, two
    out-of-range values for each other parameter, and the base itself launched on the NULL stream,
    repeatably three times, and with a NULL workspace."""
    g = Gen(op, params)
    g.rng = random.Random(zlib.crc32(op.encode()) ^ 0x5EED)
    g.seed_base += 50000
    copy = lambda: json.loads(json.dumps(base))   # noqa: E731
    calls = []
    for i, p in enumerate(g.inp):
        if p[1] in POINTER_KINDS:
            a = copy()
            a[i] = None
            _fix_refs(a, {})
            calls.append({"a": a})
    calls.append({"a": copy(), "nw": 1})
    calls.append({"a": copy(), "ne": 1})
    for i, p in enumerate(g.inp):
        t = base[i]
        if p[1] == "tensor" and isinstance(t, dict) and "sh" in t and "as" not in t:
            a = copy()
            a[i]["stale"] = 1
            calls.append({"a": a})
        elif p[1] == "tensor_list" and isinstance(t, dict) and t.get("list"):
            a = copy()
            a[i]["list"][0]["stale"] = 1
            calls.append({"a": a})
            a = copy()
            a[i]["list"][-1] = None
            calls.append({"a": a})
            a = copy()
            a[i]["list"] = []
            calls.append({"a": a})
    for pos in _tensor_positions(base):
        for what in ("dtype", "dtype", "shape", "rank9"):
            a, extra = mutate(g, base, what, pos)
            calls.append({"a": a, **extra})
    for i, p in enumerate(g.inp):
        if p[1] not in ("tensor", "tensor_list"):
            for _ in range(2):
                a, extra = mutate(g, base, "attr", i)
                calls.append({"a": a, **extra})
    calls.append({"a": copy(), "s0": 1})
    calls.append({"a": copy(), "rep": 3})
    calls.append({"a": copy(), "wsn": 1})
    return calls


# ---- commands -----------------------------------------------------------------------------------------

def succeeded(res: dict) -> bool:
    """Phase 1, every launch and the synchronisation all returned 0."""
    s2 = res.get("s2")
    s2 = s2 if isinstance(s2, list) else [s2]
    return res.get("s1") == 0 and all(x == 0 for x in s2) and res.get("sy") == 0


def _summarise(results: list) -> tuple[int, int]:
    """(successful calls, distinct failure messages of phase 1, phase 2 and the synchronisation)."""
    ok = sum(1 for r in results if succeeded(r))
    msgs = set()
    for r in results:
        if r.get("s1") not in (0, None):
            msgs.add(r.get("m1"))
        for m in (r.get("m2") if isinstance(r.get("m2"), list) else [r.get("m2")]) + [r.get("my")]:
            if m:
                msgs.add(m)
    return ok, len(msgs)


def cmd_record(args) -> int:
    params = registry_params()
    exported = exported_operators()
    missing = [op for op in exported if op not in params]
    if missing:
        print(f"warning: no parameter list in the catalog (ops.json) for {', '.join(missing)}; "
              "regenerate the registry to record them")
    ops = [op for op in exported if op in params]
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    spath = CORPUS_DIR / SPECS_FILE
    specs = load_json(spath) if spath.exists() else {"format": FORMAT, "ops": {}}
    stored = {soc: (load_json(results_file(soc)) if results_file(soc).exists() else {"format": FORMAT, "ops": {}})
              for soc in SOCS}
    rerecord = set(args.rerecord or [])
    for name in rerecord:
        if name not in specs["ops"]:
            print(f"note: {name} is not in the corpus; recording it as new")
    todo = [op for op in ops if op not in specs["ops"] or op in rerecord]
    if args.ops:
        todo = [op for op in todo if op in set(args.ops.split(","))]
    if not todo:
        print("nothing to record: every exported operator is in the corpus")
        return 0
    print(f"recording {len(todo)} operator(s): {', '.join(todo[:8])}{' ...' if len(todo) > 8 else ''}")
    with tempfile.TemporaryDirectory(prefix="op-corpus-rec-") as tmp:
        sp = Path(tmp) / "specs.json.gz"
        # 1. random calls, probed once on each SoC to find a call that succeeds (the base of the
        #    systematic variants; the first call when none does)
        rand = {op: generate_random(op, params[op], args.calls) for op in todo}
        save_json(sp, {"format": FORMAT, "ops": {op: {"params": params[op], "calls": rand[op]} for op in todo}})
        work = [(op, list(range(len(rand[op])))) for op in todo]
        probe = {soc: run_calls(soc, work, str(sp)) for soc in SOCS}
        new = {}
        for op in todo:
            plain = [i for i, c in enumerate(rand[op]) if not set(c) - {"a"}]
            ok = [[i for i in plain if succeeded(probe[soc][(op, i)])] for soc in SOCS]
            both = [i for i in ok[0] if i in set(ok[1])]
            base = (both or ok[0] or ok[1] or [0])[0]    # succeeds on both SoCs if any call does
            structural = generate_structural(op, params[op], rand[op][base]["a"])
            new[op] = {"params": params[op], "seed": zlib.crc32(op.encode()), "structural": len(structural),
                       "calls": structural + rand[op]}
        # 2. the calls, recorded on each SoC (twice: a difference means something is not deterministic)
        save_json(sp, {"format": FORMAT, "ops": new})
        work = [(op, list(range(len(new[op]["calls"])))) for op in todo]
        for soc in SOCS:
            t0 = time.time()
            first = run_calls(soc, work, str(sp))
            t1 = time.time()
            print(f"{soc}: {len(first)} calls in {t1 - t0:.1f} s")
            if not args.once:
                second = run_calls(soc, work, str(sp))
                diff = [k for k in first if first[k] != second.get(k)]
                if diff:
                    for k in diff[:20]:
                        print(f"NONDETERMINISTIC {soc} {k}: {first[k]} != {second.get(k)}")
                    fd, dump = tempfile.mkstemp(prefix="op-corpus-nondeterministic-", suffix=".json")
                    with os.fdopen(fd, "w") as f:
                        json.dump([{"op": op, "i": i, "call": new[op]["calls"][i], "first": first[(op, i)],
                                    "second": second.get((op, i))} for op, i in diff], f, indent=1)
                    print(f"{len(diff)} call(s) differ between two recordings on {soc}; nothing stored "
                          f"(the calls: {dump})")
                    return 1
            for op in todo:
                stored[soc]["ops"][op] = [first[(op, i)] for i in range(len(new[op]["calls"]))]
    for op in todo:
        specs["ops"][op] = new[op]
    specs["ops"] = dict(sorted(specs["ops"].items()))
    save_json(spath, specs)
    for soc in SOCS:
        stored[soc]["ops"] = dict(sorted(stored[soc]["ops"].items()))
        save_json(results_file(soc), stored[soc])
    cmd_stats(args)
    return 0


def sample_work(specs: dict, sample: int | None, ops=None) -> list:
    """[(op, indices)]: every call, or a deterministic sample of about `sample` calls per operator
    (the systematic calls at the start of each operator's list are always in)."""
    work = []
    for op, entry in specs["ops"].items():
        if ops and op not in ops:
            continue
        n = len(entry["calls"])
        if not sample or sample >= n:
            work.append((op, list(range(n))))
            continue
        head = list(range(entry.get("structural", 0)))
        rest = list(range(len(head), n))
        # PYACLNN_CORPUS_SAMPLE_SEED (CI: the commit) draws another sample, so consecutive runs cover other calls
        salt = os.environ.get("PYACLNN_CORPUS_SAMPLE_SEED", "").encode()
        rng = random.Random(zlib.crc32(b"sample:" + salt + op.encode()))
        pick = sorted(set(head) | set(rng.sample(rest, min(max(sample - len(head), 0), len(rest)))))
        work.append((op, pick))
    return work


def _codes_only(result):
    """A result without its data hashes (PYACLNN_CORPUS_COMPARE=codes)."""
    return {k: v for k, v in result.items() if k != "h"} if isinstance(result, dict) else result


def compare(specs: dict, expected: dict, got: dict) -> list:
    """[(op, index, expected, got)] for every replayed call whose result differs.

    PYACLNN_CORPUS_COMPARE=codes compares statuses, messages, workspace sizes and view shapes but not
    the data hashes: for builds whose optimisation level differs from the recording's (the sanitizer
    build is -O0), where the payload of a NaN made from two NaN operands depends on which operand the
    compiler put first (x86's SSE returns the first one's), so output bytes may differ in NaN bits only.
    """
    codes = os.environ.get("PYACLNN_CORPUS_COMPARE") == "codes"
    out = []
    for (op, i), res in sorted(got.items()):
        want = expected["ops"].get(op, [None] * (i + 1))[i]
        if codes:
            want, res = _codes_only(want), _codes_only(res)
        if res != want:
            out.append((op, i, want, res))
    return out


def replay(soc: str, sample: int | None = None, ops=None) -> tuple[list, int, float]:
    specs = load_json(CORPUS_DIR / SPECS_FILE)
    expected = load_json(results_file(soc))
    work = sample_work(specs, sample, ops)
    t0 = time.time()
    got = run_calls(soc, work, specs=specs)
    return compare(specs, expected, got), len(got), time.time() - t0


def cmd_replay(args) -> int:
    bad = 0
    for soc in ([args.soc] if args.soc else SOCS):
        diffs, n, dt = replay(soc, args.sample, set(args.ops.split(",")) if args.ops else None)
        print(f"{soc}: {n} calls replayed in {dt:.1f} s, {len(diffs)} difference(s)")
        for op, i, want, res in diffs[:args.show]:
            print(f"  {op} #{i}\n    expected {want}\n    got      {res}")
        bad += len(diffs)
    return 1 if bad else 0


def cmd_stats(args) -> int:
    specs = load_json(CORPUS_DIR / SPECS_FILE)
    for soc in SOCS:
        res = load_json(results_file(soc))["ops"]
        rows = []
        for op in specs["ops"]:
            ok, msgs = _summarise(res[op])
            rows.append((ok, msgs, op, len(res[op])))
        oks = sorted(r[0] for r in rows)
        ms = sorted(r[1] for r in rows)
        total = sum(r[3] for r in rows)
        crashes = sum(1 for op in res for x in res[op] if "crash" in x)
        print(f"{soc}: {len(rows)} operators, {total} calls, crashes {crashes}; successful calls per operator "
              f"min {oks[0]} median {oks[len(oks) // 2]} max {oks[-1]}; distinct failure messages "
              f"min {ms[0]} median {ms[len(ms) // 2]} max {ms[-1]}")
        if getattr(args, "verbose", False):
            for ok, msgs, op, n in sorted(rows):
                print(f"  {op:40s} calls {n:4d} succeeded {ok:4d} failure-messages {msgs:3d}")
    return 0


_SANITIZER = re.compile(r"(ERROR: AddressSanitizer.*|SUMMARY: .*|.*runtime error:.*|#\d+ 0x[0-9a-f]+ in \S+ \S+)")


def cmd_fuzz(args) -> int:
    """Generates --calls random calls per operator from --seed (not the corpus's stream: nothing is
    stored in the corpus) and runs them on each SoC; reports every call that killed the process
    (signal, sanitizer report when the ASan build is preloaded, or a child that hung past --timeout)."""
    params = registry_params()
    cat = catalog()
    family = {op: info.get("family") or "?" for op, info in cat["operators"].items()}
    if args.specs:
        data = load_json(args.specs)
        todo = {op: e["calls"] for op, e in data["ops"].items()}
        params = {op: e["params"] for op, e in data["ops"].items()}
    else:
        ops = [op for op in exported_operators() if op in params]
        if args.ops:
            ops = [op for op in ops if op in set(args.ops.split(","))]
        if args.families:
            fams = set(args.families.split(","))
            ops = [op for op in ops if family.get(op, "legacy") in fams]
        if args.skip:
            ops = [op for op in ops if op not in set(args.skip.split(","))]
        todo = {op: generate_random(op, params[op], args.calls, args.seed, args.adversarial) for op in ops}
    socs = [args.soc] if args.soc else list(SOCS)
    os.environ["OP_CORPUS_CALL_TIMEOUT"] = str(args.call_timeout)   # the children inherit it (child_env)
    log: list = []
    stats = {}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="op-corpus-fuzz-") as tmp:
        sp = Path(tmp) / "specs.json.gz"
        save_json(sp, {"format": FORMAT, "ops": {op: {"params": params[op], "calls": c} for op, c in todo.items()}})
        for soc in socs:
            for op, calls in todo.items():
                got = run_calls(soc, [(op, list(range(len(calls))))], str(sp),
                                timeout=args.timeout + 0.25 * len(calls), crash_log=log)
                st = stats.setdefault((soc, op), collections.Counter())
                for res in got.values():
                    st["calls"] += 1
                    st["ok"] += succeeded(res)
                    st["refused"] += res.get("s1") not in (0, None)
                    st["faulted"] += res.get("s1") == 0 and not succeeded(res)
                    st["crash"] += "crash" in res
                    st["mk"] += "mk" in res
                if args.verbose:
                    print(f"{soc} {op:36s} {dict(st)}", flush=True)
    crashes = [c for c in log if c[2] != -signal.SIGALRM]
    slow = [c for c in log if c[2] == -signal.SIGALRM]
    for soc, key, rc, err in crashes + slow:
        what = f"ran longer than {args.call_timeout} s" if rc == -signal.SIGALRM else f"exit {rc}"
        print(f"CRASH {soc} {key} {what}")
        if key is not None:
            print("  call: " + json.dumps(todo[key[0]][key[1]])[:1500])
        lines = [ln for ln in err.splitlines() if _SANITIZER.search(ln)]
        print("  " + "\n  ".join((lines or err.splitlines())[:25]))
    if args.save and log:
        keep: dict = {}
        for soc, key, rc, err in crashes + slow:
            if key is not None:
                keep.setdefault(key[0], []).append(todo[key[0]][key[1]])
        save_json(args.save, {"format": FORMAT, "ops": {op: {"params": params[op], "calls": c} for op, c in keep.items()}})
        print(f"crashing calls saved to {args.save} (run them again: fuzz --specs {args.save})")
    total = collections.Counter()
    for st in stats.values():
        total.update(st)
    print(f"fuzz: seed={args.seed} calls/op={args.calls} adversarial={args.adversarial} ops={len(todo)} "
          f"socs={','.join(socs)} {dict(total)} crashes={len(crashes)} slow={len(slow)} time={time.time() - t0:.0f}s "
          f"{'OK' if not crashes else 'FAIL'}")
    return 1 if crashes else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        return replay_child(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="record operators missing from the corpus (both SoCs, twice)")
    rec.add_argument("--rerecord", nargs="*", help="operators to record again (a deliberate behaviour change)")
    rec.add_argument("--ops", help="comma-separated subset of the operators to record")
    rec.add_argument("--calls", type=int, default=CALLS_PER_OP)
    rec.add_argument("--once", action="store_true", help="skip the second (determinism) recording")
    rec.add_argument("--verbose", action="store_true")
    rp = sub.add_parser("replay", help="replay the corpus and print differences")
    rp.add_argument("--soc", choices=SOCS)
    rp.add_argument("--ops")
    rp.add_argument("--sample", type=int)
    rp.add_argument("--show", type=int, default=20)
    st = sub.add_parser("stats", help="coverage per operator")
    st.add_argument("--verbose", action="store_true")
    fz = sub.add_parser("fuzz", help="random calls from another seed, looking for crashes (nothing stored)")
    fz.add_argument("--seed", type=int, default=1, help="the calls' stream (any seed but 0, the corpus's own)")
    fz.add_argument("--calls", type=int, default=1000, help="random calls per operator")
    fz.add_argument("--adversarial", type=float, default=0.3,
                    help="fraction of the calls with adversarial views (adversarial_views)")
    fz.add_argument("--ops", help="comma-separated operators")
    fz.add_argument("--families", help="comma-separated families of the catalog (legacy: operators outside it)")
    fz.add_argument("--skip", help="comma-separated operators to leave out")
    fz.add_argument("--soc", choices=SOCS)
    fz.add_argument("--timeout", type=float, default=600, help="seconds per child, plus 0.25 s per call")
    fz.add_argument("--call-timeout", type=int, default=30,
                    help="seconds a call may run (then SIGALRM ends the child: reported as a crash)")
    fz.add_argument("--save", help="write the crashing calls here (a specs file)")
    fz.add_argument("--specs", help="run the calls of this specs file instead of generating")
    fz.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "fuzz" and args.seed == 0 and not args.specs:
        ap.error("--seed 0 is the corpus's own stream: pick another")
    return {"record": cmd_record, "replay": cmd_replay, "stats": cmd_stats, "fuzz": cmd_fuzz}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())

