"""Fuzzed calls of the runtime (libascendcl): init, devices, contexts, streams, events, memory.

Each ``call_*`` function makes one C call with adversarial arguments and updates the model in
``World``. ``GENERATORS`` lists them with their weights.
"""
from __future__ import annotations

import ctypes
import json
import os
import tempfile

from pyaclnn import capi

import adversarial as adv
from world import HOST_BUFFER_BYTES, MAX_DEVICE_ALLOC, MAX_LIVE, World, padded_size

HONEST_LIMIT = 4 << 20   # largest pageable span the fuzzer backs with real memory

_C = ctypes


def _out(w: World, ctype=_C.c_void_p, null_rate: float = 0.1):
    """An out-parameter: a fresh C variable by reference, sometimes NULL. Returns (arg, cell)."""
    cell = ctype()
    return (None, cell) if w.rng.random() < null_rate else (_C.byref(cell), cell)


def _timeout(w: World) -> int:
    return w.rng.choice((-1, -1, 0, 1, 10, -2, adv.INT32_MIN, adv.int32(w.rng) % 50))


def _device_id(w: World) -> int:
    return adv.enum(w.rng, range(w.device_count))


# ---- init ------------------------------------------------------------------------------------------

_CONFIGS: dict[str, bytes] = {}


def config_files(directory: str) -> None:
    """Writes the aclInit configurations the fuzzer passes (valid, invalid, empty, nested)."""
    samples = {"empty.json": "", "valid.json": json.dumps({"dump": {"dump_mode": "output"}}),
               "invalid.json": "{not json", "deep.json": "[" * 40 + "]" * 40, "binary.json": "\x00\xff{"}
    for name, text in samples.items():
        path = os.path.join(directory, name)
        with open(path, "w", encoding="latin-1") as f:
            f.write(text)
        _CONFIGS[name] = path.encode()
    _CONFIGS["missing"] = os.path.join(directory, "does-not-exist.json").encode()
    _CONFIGS["directory"] = directory.encode()


def call_init(w: World) -> None:
    choice = w.rng.choice((None, None, None, b"", *_CONFIGS.values()))
    w.call("aclInit", choice)


def call_finalize(w: World) -> None:
    if w.rng.random() < 0.5:
        w.call("aclFinalize")
    else:
        arg, _ = _out(w, _C.c_uint64, 0.3)
        w.call("aclFinalizeReference", arg)


# ---- devices -----------------------------------------------------------------------------------------

def call_set_device(w: World) -> None:
    w.call("aclrtSetDevice", _device_id(w))


def call_reset_device(w: World) -> None:
    name = "aclrtResetDeviceForce" if w.rng.random() < 0.2 else "aclrtResetDevice"
    w.call(name, _device_id(w))


def call_device_queries(w: World) -> None:
    rng = w.rng
    which = rng.randrange(8)
    if which == 0:
        w.call("aclrtGetDevice", _out(w, _C.c_int32)[0])
    elif which == 1:
        w.call("aclrtGetDeviceCount", _out(w, _C.c_uint32)[0])
    elif which == 2:
        w.call("aclrtGetRunMode", _out(w, _C.c_int)[0])
    elif which == 3:
        w.call("aclrtGetSocName")
    elif which == 4:
        w.call("aclrtGetVersion", _out(w, _C.c_int32)[0], _out(w, _C.c_int32)[0], _out(w, _C.c_int32)[0])
    elif which == 5:
        w.call(rng.choice(("aclrtGetLastError", "aclrtPeekAtLastError")), adv.enum(rng, (0,)))
    elif which == 6:
        w.call("aclrtGetMemInfo", adv.enum(rng, range(0, 18)), _out(w, _C.c_size_t)[0], _out(w, _C.c_size_t)[0])
    elif rng.random() < 0.5:
        w.call("aclrtSynchronizeDeviceWithTimeout", _timeout(w))
    else:
        w.call("aclrtSynchronizeDevice")


# ---- contexts --------------------------------------------------------------------------------------

def call_context(w: World) -> None:
    rng = w.rng
    which = rng.randrange(4)
    if which == 0:
        if len(w.live["context"]) >= MAX_LIVE["context"]:
            return _destroy(w, "context", "aclrtDestroyContext")
        arg, cell = _out(w)
        if w.call("aclrtCreateContext", arg, _device_id(w)) == 0 and arg is not None:
            w.add("context", cell.value)
    elif which == 1:
        _destroy(w, "context", "aclrtDestroyContext")
    elif which == 2:
        h, foreign = w.handle("context")
        w.call("aclrtSetCurrentContext", h, must_fail=foreign)
    else:
        w.call("aclrtGetCurrentContext", _out(w)[0])


def _destroy(w: World, kind: str, name: str) -> None:
    h, foreign = w.handle(kind, live_weight=0.7)
    if w.call(name, h, must_fail=foreign) == 0 and h:
        w.kill(kind, h)


# ---- streams --------------------------------------------------------------------------------------

def call_stream_create(w: World) -> None:
    if len(w.live["stream"]) >= MAX_LIVE["stream"]:
        return _destroy(w, "stream", "aclrtDestroyStream")
    arg, cell = _out(w)
    if w.rng.random() < 0.5:
        rc = w.call("aclrtCreateStream", arg)
    else:
        rc = w.call("aclrtCreateStreamWithConfig", arg, adv.uint32(w.rng) % 16, w.rng.choice((0, 1, 2, 4, 8, 0x10,
                    0x20, 0x40, 0x80, adv.uint32(w.rng))))
    if rc == 0 and arg is not None:
        w.add("stream", cell.value)


def call_stream_destroy(w: World) -> None:
    _destroy(w, "stream", "aclrtDestroyStreamForce" if w.rng.random() < 0.3 else "aclrtDestroyStream")


def call_stream_sync(w: World) -> None:
    rng = w.rng
    s, foreign = w.handle("stream")
    which = rng.randrange(3)
    if which == 0:
        w.call("aclrtSynchronizeStream", s, must_fail=foreign)
    elif which == 1:
        w.call("aclrtSynchronizeStreamWithTimeout", s, _timeout(w), must_fail=foreign)
    else:
        w.call("aclrtStreamQuery", s, _out(w, _C.c_int)[0], must_fail=foreign)


# ---- events -----------------------------------------------------------------------------------------

def call_event_create(w: World) -> None:
    if len(w.live["event"]) >= MAX_LIVE["event"]:
        return _destroy(w, "event", "aclrtDestroyEvent")
    rng = w.rng
    arg, cell = _out(w)
    which = rng.randrange(3)
    flag = rng.choice((1, 8, 9, 0xF, 0x10, 0x20, 0x40, 0x11, 0, adv.uint32(rng)))
    if which == 0:
        rc = w.call("aclrtCreateEvent", arg)
    elif which == 1:
        rc = w.call("aclrtCreateEventWithFlag", arg, flag)
    else:
        rc = w.call("aclrtCreateEventExWithFlag", arg, flag)
    if rc == 0 and arg is not None:
        w.add("event", cell.value)


def call_event_use(w: World) -> None:
    rng = w.rng
    e, e_foreign = w.handle("event")
    s, s_foreign = w.handle("stream")
    foreign = e_foreign or s_foreign
    which = rng.randrange(9)
    if which == 0:
        w.call("aclrtRecordEvent", e, s, must_fail=foreign)
    elif which == 1:
        w.call("aclrtStreamWaitEvent", s, e, must_fail=foreign)
    elif which == 2:
        w.call("aclrtResetEvent", e, s, must_fail=foreign)
    elif which == 3:
        w.call("aclrtQueryEvent", e, _out(w, _C.c_int)[0], must_fail=e_foreign)
    elif which == 4:
        w.call("aclrtQueryEventStatus", e, _out(w, _C.c_int)[0], must_fail=e_foreign)
    elif which == 5:
        w.call("aclrtSynchronizeEvent", e, must_fail=e_foreign)
    elif which == 6:
        w.call("aclrtSynchronizeEventWithTimeout", e, _timeout(w), must_fail=e_foreign)
    elif which == 7:
        e2, e2_foreign = w.handle("event")
        w.call("aclrtEventElapsedTime", _out(w, _C.c_float)[0], e, e2, must_fail=e_foreign or e2_foreign)
    else:
        w.call("aclrtEventGetTimestamp", e, _out(w, _C.c_uint64)[0], must_fail=e_foreign)


def call_event_destroy(w: World) -> None:
    _destroy(w, "event", "aclrtDestroyEvent")


# ---- memory ---------------------------------------------------------------------------------------------

def _alloc_size(w: World) -> int:
    if w.rng.random() < 0.8:
        return w.rng.choice((1, 2, 4, 31, 32, 33, 64, 100, 512, 1000, 4096, w.rng.randrange(1, MAX_DEVICE_ALLOC)))
    return w.rng.choice((0, 1 << 30, 1 << 40, adv.UINT64_MAX, adv.UINT64_MAX - 31, 1 << 63))


def call_malloc(w: World) -> None:
    rng = w.rng
    if len(w.device) >= 48:
        return call_free(w)
    nbytes = _alloc_size(w)
    arg, cell = _out(w, null_rate=0.05)
    pad = rng.random() < 0.7
    policy = adv.enum(rng, range(0, 8))
    rc = w.call("aclrtMalloc" if pad else "aclrtMallocAlign32", arg, nbytes, policy)
    if rc == 0 and arg is not None:
        huge1g = policy in (capi.ACL_MEM_MALLOC_HUGE1G_ONLY, capi.ACL_MEM_MALLOC_HUGE1G_ONLY_P2P)
        w.device[cell.value] = padded_size(nbytes, pad and not huge1g)


def call_free(w: World) -> None:
    p, what = w.device_address()
    must_fail = None
    if what in ("freed", "pinned", "host", "wild") and not (what == "freed" and w.where(p)[0] != "pageable"):
        must_fail = f"{what} pointer"
    if what == "device" and p not in w.device:
        must_fail = "pointer into the middle of a device block"
    rc = w.call("aclrtFree", p, must_fail=must_fail)
    if rc == 0 and p in w.device:
        del w.device[p]
        w.freed_device.append(p)


def call_host_alloc(w: World) -> None:
    rng = w.rng
    if rng.random() < 0.5 or len(w.pinned) >= 16:
        freed = w.freed_pointer(w.freed_pinned)
        p = rng.choice([*w.pinned, freed, None, w.host_address(), adv.wild_address(rng)])
        rc = w.call("aclrtFreeHost", p)
        if rc == 0 and p in w.pinned:
            del w.pinned[p]
            w.freed_pinned.append(p)
        return
    # Host memory really is allocated: modest sizes, or sizes refused before any allocation.
    nbytes = w.rng.choice((0, 1, 64, 100, 4096, w.rng.randrange(1, 1 << 20), adv.UINT64_MAX, adv.UINT64_MAX - 31))
    arg, cell = _out(w, null_rate=0.05)
    if w.call("aclrtMallocHost", arg, nbytes) == 0 and arg is not None:
        w.pinned[cell.value] = nbytes


# ---- copies ------------------------------------------------------------------------------------------

_HOST_SIDE = {0: ("host", "host"), 1: ("host", "device"), 2: ("device", "host"), 3: ("device", "device"),
              5: ("host", "device")}   # kind -> (src wants, dst wants); 4 (DEFAULT) decides by address


def _honest_pointer(w: World):
    """A pointer for a side the runtime treats as host memory: never a lie about its extent."""
    r = w.rng.random()
    if r < 0.08:
        return None
    # Pointers into pinned or device blocks stay inside them: one past the end would be memory the
    # runtime does not know, i.e. a host pointer with nothing behind it.
    if r < 0.25 and w.pinned:
        base = w.rng.choice(list(w.pinned))
        return base + min(w.rng.choice((0, 0, 1, w.pinned[base] - 1)), w.pinned[base] - 1)
    if r < 0.45 and w.device:       # refused on a host side; a device side checks its bounds
        base = w.rng.choice(list(w.device))
        return base + min(w.rng.choice((0, 0, 3, w.device[base] - 1)), w.device[base] - 1)
    return w.host_address()


def _side_ok(w: World, p, span: int, wants: str) -> tuple[bool, bool]:
    """(accepted, pageable) for one side of a copy, by the runtime's documented rules."""
    where, base, nbytes = w.where(p)
    if wants == "device":
        return where == "device" and span <= base + nbytes - p, False
    if where == "device":
        return False, False
    if where == "pinned":
        return span <= base + nbytes - p, False
    return True, True


def _wants(w: World, kind: int, src, dst) -> tuple[str, str]:
    if kind == capi.ACL_MEMCPY_DEFAULT:
        return tuple("device" if w.where(p)[0] == "device" else "host" for p in (src, dst))
    return _HOST_SIDE[kind]


def _pick_pointers(w: World, kind: int):
    """(src, dst): device-side positions get any device-pointer category, host-side ones honest memory."""
    if kind not in _HOST_SIDE:                   # DEFAULT or an invalid kind: honest both sides
        return _honest_pointer(w), _honest_pointer(w)
    src_wants, dst_wants = _HOST_SIDE[kind]
    pick = (lambda wants: w.device_address()[0] if wants == "device" else _honest_pointer(w))
    return pick(src_wants), pick(dst_wants)


def _make_honest(w: World, kind: int, src, dst, src_span: int, dst_span: int):
    """If the runtime would accept the copy, give every pageable side real memory for its span.

    Returns (src, dst) or None when the spans are too large to back honestly (skip the call). Whether
    it skips depends on the model only: every pointer the fuzzer picks lies in its own block or in
    none (World._outside_other_blocks), so `where` never sees an address malloc happened to reuse.
    """
    if not src or not dst or kind not in (0, 1, 2, 3, 4, 5):
        return src, dst
    src_wants, dst_wants = _wants(w, kind, src, dst)
    src_ok, src_pageable = _side_ok(w, src, src_span, src_wants)
    dst_ok, dst_pageable = _side_ok(w, dst, dst_span, dst_wants)
    if not (src_ok and dst_ok):
        return src, dst                           # refused before any byte moves
    for pageable, span in ((src_pageable, src_span), (dst_pageable, dst_span)):
        if pageable and span > HONEST_LIMIT:
            return None
    if src_pageable and src_span > HOST_BUFFER_BYTES:
        src = w.host_span(src_span)
    if dst_pageable and dst_span > HOST_BUFFER_BYTES:
        dst = w.host_span(dst_span)
    return src, dst


def _copy_count(w: World) -> tuple[int, int]:
    rng = w.rng
    count = rng.choice((0, 1, 4, 32, 64, 100, 4096, 4128, rng.randrange(1, 1 << 17), adv.size(rng, 256)))
    dest_max = rng.choice((count, count, count + rng.randrange(0, 64), max(count - 1, 0), adv.size(rng, 256)))
    return count, dest_max


def call_memcpy(w: World) -> None:
    rng = w.rng
    kind = adv.enum(rng, range(0, 6))
    count, dest_max = _copy_count(w)
    src, dst = _pick_pointers(w, kind)
    if count <= dest_max:
        picked = _make_honest(w, kind, src, dst, count, count)
        if picked is None:
            return
        src, dst = picked
    if rng.random() < 0.5:
        w.call("aclrtMemcpy", dst, dest_max, src, count, kind)
    else:
        s, foreign = w.handle("stream")
        w.call("aclrtMemcpyAsync", dst, dest_max, src, count, kind, s)


def call_memcpy2d(w: World) -> None:
    rng = w.rng
    kind = adv.enum(rng, range(0, 6))
    width = rng.choice((0, 1, 8, 32, 100, adv.size(rng, 64)))
    height = rng.choice((0, 1, 2, 7, 64, adv.size(rng, 8)))
    pitch = lambda: rng.choice((width, width, width + 32, max(width - 1, 0), adv.size(rng, 128)))  # noqa: E731
    spitch, dpitch = pitch(), pitch()
    src, dst = _pick_pointers(w, kind)
    valid_kind = kind in (1, 2, 3, 4)
    if width and height and width <= min(spitch, dpitch) and valid_kind:
        rows = height - 1
        if rows * max(spitch, dpitch) + width < 1 << 64:
            picked = _make_honest(w, kind, src, dst, rows * spitch + width, rows * dpitch + width)
            if picked is None:
                return
            src, dst = picked
    if rng.random() < 0.5:
        w.call("aclrtMemcpy2d", dst, dpitch, src, spitch, width, height, kind)
    else:
        s, _ = w.handle("stream")
        w.call("aclrtMemcpy2dAsync", dst, dpitch, src, spitch, width, height, kind, s)


def call_memset(w: World) -> None:
    rng = w.rng
    p, _ = w.device_address()
    count, max_count = _copy_count(w)
    value = adv.int32(rng)
    if rng.random() < 0.5:
        w.call("aclrtMemset", p, max_count, value, count)
    else:
        s, _ = w.handle("stream")
        w.call("aclrtMemsetAsync", p, max_count, value, count, s)


# ---- plain value functions ----------------------------------------------------------------------

def call_conversions(w: World) -> None:
    rng = w.rng
    which = rng.randrange(3)
    if which == 0:
        w.call("aclFloat16ToFloat", rng.randrange(0, 1 << 16))
    elif which == 1:
        w.call("aclFloatToFloat16", adv.double(rng, (-70000.0, 70000.0)))
    else:
        w.call("aclDataTypeSize", adv.enum(rng, range(0, 43)))


GENERATORS = [
    (1, call_init), (0.5, call_finalize), (4, call_set_device), (1, call_reset_device),
    (3, call_device_queries), (2, call_context), (3, call_stream_create), (1.5, call_stream_destroy),
    (3, call_stream_sync), (2, call_event_create), (5, call_event_use), (1, call_event_destroy),
    (5, call_malloc), (3, call_free), (1.5, call_host_alloc), (8, call_memcpy), (4, call_memcpy2d),
    (3, call_memset), (1, call_conversions),
]


def temp_config_dir() -> str:
    directory = tempfile.mkdtemp(prefix="pyaclnn-fuzz-")
    config_files(directory)
    return directory
