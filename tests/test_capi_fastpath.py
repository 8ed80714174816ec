"""The compiled call path of the capi mirror (pyaclnn/capi/_fastcapi.c) against its ctypes fallback.

Every scenario runs twice in this process, once through the ctypes functions (``capi.cfunc``) and
once through their ``CFunction`` wrappers (``_accel.wrap``), and the two runs must observe the
same: return values (handles compared by what the library reports about them), out-parameters,
exceptions (type and message) and device results. The ctypes run is the reference: the mirror's
semantics are ctypes', the compiled path may only be faster.
"""
from __future__ import annotations

import ctypes
import enum
from ctypes import POINTER, byref, c_double, c_int, c_int32, c_int64, c_uint32, c_uint64, c_void_p

from pathlib import Path

import numpy as np
import pytest

from helpers import run_python
from pyaclnn import capi
from pyaclnn.capi import _accel

HOT = ("aclCreateTensor", "aclDestroyTensor", "aclCreateScalar", "aclDestroyScalar", "aclCreateIntArray",
       "aclDestroyIntArray", "aclnnAmpUpdateScaleGetWorkspaceSize", "aclnnAmpUpdateScale",
       "aclrtSynchronizeStream", "aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclrtCreateStream",
       "aclrtDestroyStream", "aclrtSetDevice", "aclGetRecentErrMsg", "aclInit")


@pytest.fixture(scope="module")
def mod(acl):
    m = _accel.module()
    if m is None:
        pytest.skip(f"compiled capi path not available here: {_accel.why_unavailable}")
    return m


class Api:
    """capi's C functions, either the ctypes ones or their compiled-path wrappers."""

    def __init__(self, compiled: bool, mod=None):
        self.compiled = compiled
        self.mod = mod
        self.fns = {}

    def __getattr__(self, name):
        if name not in capi.PROTOTYPES:
            return getattr(capi, name)
        fn = self.fns.get(name)
        if fn is None:
            fn = capi.cfunc(name)
            if self.compiled:
                fn = _accel.wrap(fn, self.mod)
            self.fns[name] = fn
        return fn

    def fallbacks(self) -> int:
        return sum(getattr(f, "fallbacks", 0) for f in self.fns.values())


def both(mod, scenario):
    """Run ``scenario(api)`` through ctypes and through the compiled path; return both results."""
    ref = Api(False)
    fast = Api(True, mod)
    return scenario(ref), scenario(fast), fast


def outcome(fn, *args, **kwargs):
    """What a call does: ('ok', result) or ('raise', exception type, message)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001  the point is to compare them
        return ("raise", type(exc), str(exc))


def test_hot_entry_points_take_the_compiled_path(mod):
    for name in HOT:
        fn = _accel.wrap(capi.cfunc(name), mod)
        assert type(fn) is mod.CFunction, name
        assert fn.compiled and fn.ctypes_function is capi.cfunc(name)


def test_only_the_descriptor_functions_keep_the_gil(mod):
    # (acl_meta.h's descriptors: host memory and their own short locks, never a wait or a call into Python)
    assert _accel.KEEP_GIL and all(capi.SOURCES[n][1] == "aclnn/acl_meta.h" for n in _accel.KEEP_GIL)
    for name in (*HOT, *_accel.KEEP_GIL):
        assert _accel.wrap(capi.cfunc(name), mod).keeps_gil == (name in _accel.KEEP_GIL), name


def test_a_call_that_waits_releases_the_gil_for_the_python_it_waits_for(mod):
    # The stream's host function is Python: it needs the GIL while the main thread sits in the compiled
    # aclrtSynchronizeStream; were the GIL kept there, this child would hang until its timeout.
    code, out, err = run_python("""
        import pyaclnn
        from pyaclnn import capi
        from pyaclnn.capi import _accel
        stream = pyaclnn.Stream()
        seen = []
        fn = capi.aclrtHostFunc(lambda _arg: seen.append(1))
        capi.cfunc("aclrtSynchronizeStream")
        sync = capi.aclrtSynchronizeStream
        assert type(sync) is _accel.module().CFunction and not sync.keeps_gil
        assert capi.aclrtLaunchHostFunc(stream.handle, fn, None) == 0
        assert sync(stream.handle) == 0
        print(seen)
    """, timeout=60)
    assert code == 0 and out.split() == ["[1]"], err


def test_module_attribute_is_the_compiled_function_once_bound(mod):
    capi.cfunc("aclDataTypeSize")
    fn = capi.aclDataTypeSize
    assert type(fn) is mod.CFunction and fn.ctypes_function is capi.cfunc("aclDataTypeSize")
    stand_in = capi._unbound("aclDataTypeSize")          # what `from pyaclnn.capi import *` took earlier
    assert stand_in(capi.ACL_FLOAT16) == fn(capi.ACL_FLOAT16) == 2


def test_amp_update_scale_sequence_line_by_line(mod):
    """The benchmark's sequence (tensors, phase 1, launch, sync, destroy), results read back."""
    def scenario(api):
        stream = c_void_p()
        assert api.aclrtCreateStream(byref(stream)) == 0
        one = (c_int64 * 1)(1)
        host = [np.float32([100.0]), np.int32([0]), np.float32([0.0])]
        dev = []
        for h in host:
            p = c_void_p()
            assert api.aclrtMalloc(byref(p), 4, capi.ACL_MEM_MALLOC_HUGE_FIRST) == 0
            assert api.aclrtMemcpy(p, 4, h.ctypes.data, 4, capi.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            dev.append(p)
        seen = []
        ws, executor = c_uint64(7), c_void_p()
        for step in range(30):
            found = 1.0 if step in (20, 21) else 0.0
            assert api.aclrtMemcpy(dev[2].value, 4, np.float32([found]).ctypes.data, 4,
                                   capi.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            ts = [api.aclCreateTensor(one, 1, dt, one, 0, capi.ACL_FORMAT_ND, one, 1, d)
                  for dt, d in ((capi.ACL_FLOAT, dev[0]), (capi.ACL_INT32, dev[1]), (capi.ACL_FLOAT, dev[2]))]
            status = api.aclnnAmpUpdateScaleGetWorkspaceSize(ts[0], ts[1], ts[2], 2.0, 0.5, 3, ts[0], ts[1],
                                                             byref(ws), byref(executor))
            launched = api.aclnnAmpUpdateScale(None, ws.value, executor, stream)
            synced = api.aclrtSynchronizeStream(stream)
            destroyed = [api.aclDestroyTensor(t) for t in ts]
            out = [np.zeros(1, np.float32), np.zeros(1, np.int32)]
            for o, d in zip(out, dev):
                assert api.aclrtMemcpy(o.ctypes.data, 4, d, 4, capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
            seen.append((status, ws.value, executor.value is not None, launched, synced, destroyed,
                         float(out[0][0]), int(out[1][0])))
        for d in dev:
            assert api.aclrtFree(d) == 0
        assert api.aclrtDestroyStream(stream) == 0
        return seen

    ref, got, fast = both(mod, scenario)
    assert got == ref
    scale, tracker = 100.0, 0                 # the operator's rule (growth_interval 3), step by step
    for step, seen in enumerate(ref):
        if step in (20, 21):
            scale, tracker = scale * 0.5, 0
        else:
            tracker += 1
            if tracker == 3:
                scale, tracker = scale * 2.0, 0
        assert seen[6:] == (scale, tracker), step
    assert fast.fallbacks() == 0              # the sequence never left the compiled path


def _tensor_facts(api, handle):
    """What the library reports about an aclTensor (shape, strides, offset, dtype, address)."""
    dims, n = POINTER(c_int64)(), c_uint64()
    facts = []
    for getter in (api.aclGetViewShape, api.aclGetViewStrides, api.aclGetStorageShape):
        facts.append(getter(handle, byref(dims), byref(n)))
        facts.append([dims[i] for i in range(n.value)])
    off, dt, addr = c_int64(), c_int(), c_void_p()
    facts += [api.aclGetViewOffset(handle, byref(off)), off.value, api.aclGetDataType(handle, byref(dt)), dt.value,
              api.aclGetRawTensorAddr(handle, byref(addr)), addr.value]
    return facts


class Color(enum.IntEnum):
    FLOAT16 = 1


@pytest.mark.parametrize("case", [
    "array", "pointer", "scalar_by_ref", "by_ref_of_element", "enum_dtype", "bool_dims", "masked_dims",
    "negative_offset", "address_masked", "address_negative", "address_c_void_p", "address_array", "address_none",
    "numpy_int", "huge_offset",
])
def test_create_tensor_arguments(mod, case):
    """aclCreateTensor's arguments in each form ctypes accepts, through both paths."""
    def scenario(api):
        dims = (c_int64 * 2)(2, 3)
        strides = (c_int64 * 2)(3, 1)
        buf = (ctypes.c_uint8 * 64)()
        args = [dims, 2, capi.ACL_FLOAT16, strides, 0, capi.ACL_FORMAT_ND, dims, 2, 4096]
        if case == "pointer":
            args[0] = args[6] = ctypes.cast(dims, POINTER(c_int64))
        elif case == "scalar_by_ref":
            one = c_int64(5)
            args[0:4] = [one, 1, capi.ACL_FLOAT, (c_int64 * 1)(1)]
            args[6:8] = [one, 1]
        elif case == "by_ref_of_element":
            first = c_int64.from_buffer(dims)
            args[0] = byref(first)
        elif case == "enum_dtype":
            args[2] = Color.FLOAT16
            args[5] = capi.aclFormat.ACL_FORMAT_ND
        elif case == "bool_dims":
            args[1] = True
            args[7] = True
        elif case == "masked_dims":
            args[1] = 2 ** 64 + 2                  # ctypes masks integers: no overflow error
        elif case == "negative_offset":
            args[4] = -1
        elif case == "address_masked":
            args[8] = 2 ** 64 + 4096
        elif case == "address_negative":
            args[8] = -4096
        elif case == "address_c_void_p":
            args[8] = c_void_p(8192)
        elif case == "address_array":
            args[8] = buf
        elif case == "address_none":
            args[8] = None
        elif case == "numpy_int":
            args[1] = np.int64(2)                  # not a Python int: handed to ctypes
        elif case == "huge_offset":
            args[4] = 2 ** 63
        handle = api.aclCreateTensor(*args)
        facts = None if handle is None else _tensor_facts(api, handle)
        if case == "address_array" and facts:
            facts[-1] = facts[-1] == ctypes.addressof(buf)
        destroyed = None if handle is None else api.aclDestroyTensor(handle)
        return handle is None, facts, destroyed, api.aclGetRecentErrMsg() if handle is None else None

    ref, got, fast = both(mod, scenario)
    assert got == ref
    if case == "numpy_int":
        assert fast.fallbacks() == 1
    else:
        assert fast.fallbacks() == 0, case


@pytest.mark.parametrize("case", [
    "float_for_int", "str_for_int", "int_for_pointer", "wrong_item_type", "by_ref_wrong_type", "by_ref_of_array",
    "too_few", "too_many", "keyword", "float_for_address", "str_for_address",
])
def test_argument_errors_are_ctypes_errors(mod, case):
    def call(api):
        dims = (c_int64 * 1)(4)
        args = [dims, 1, capi.ACL_FLOAT, dims, 0, capi.ACL_FORMAT_ND, dims, 1, 4096]
        kwargs = {}
        if case == "float_for_int":
            args[1] = 1.0
        elif case == "str_for_int":
            args[2] = "ACL_FLOAT"
        elif case == "int_for_pointer":
            args[0] = 12345
        elif case == "wrong_item_type":
            args[3] = (c_int32 * 1)(1)
        elif case == "by_ref_wrong_type":
            args[0] = byref(c_int32(4))
        elif case == "by_ref_of_array":
            args[0] = byref(dims)
        elif case == "too_few":
            args = args[:-1]
        elif case == "too_many":
            args = args + [0]
        elif case == "keyword":
            args, kwargs = args[:-1], {"tensorData": 4096}
        elif case == "float_for_address":
            args[8] = 4096.0
        elif case == "str_for_address":
            args[8] = "nowhere"
        r = outcome(api.aclCreateTensor, *args, **kwargs)
        if r[0] == "ok" and r[1]:
            api.aclDestroyTensor(r[1])
            r = ("ok", "a tensor")
        return r

    ref, got, _ = both(mod, call)
    assert got == ref
    if case not in ("too_many", "str_for_address"):     # ctypes passes extra arguments of a C function on
        assert ref[0] == "raise", ref


@pytest.mark.parametrize("value", [0, 1, 27, -1, 2 ** 32 + 1, 2 ** 70 + 27, True, Color.FLOAT16, np.int32(27),
                                   1.0, None, "1"])
def test_int_conversion(mod, value):
    ref, got, _ = both(mod, lambda api: outcome(api.aclDataTypeSize, value))
    assert got == ref


@pytest.mark.parametrize("value", [0.0, 1.5, -2.75, 65504.0, 1e300, float("inf"), float("nan"), 3, 2 ** 1100,
                                   True, np.float32(0.5), None, "1.0"])
def test_float_conversion(mod, value):
    def run(api):
        r = outcome(api.aclFloatToFloat16, value)
        back = outcome(api.aclFloat16ToFloat, r[1]) if r[0] == "ok" else None
        return r, back if back is None or back[1] == back[1] else "nan"
    ref, got, _ = both(mod, run)
    assert got == ref


@pytest.mark.parametrize("value", ["", "/nonexistent/acl.json", "caf\u00e9.json", "a\0b", b"/nonexistent.json",
                                   None, "\ud800", bytearray(b"x"), 5])
def test_const_char_conversion(mod, value):
    """aclInit(const char*): str as UTF-8, bytes, None; anything else is ctypes' error."""
    def run(api):
        r = outcome(api.aclInit, value)
        return r, api.aclGetRecentErrMsg() is None
    ref, got, _ = both(mod, run)
    assert got == ref


def test_const_char_reaches_c_as_ctypes_sends_it(tmp_path):
    """aclInit(path) of a missing file names the path in its message: the bytes C received."""
    code = r"""
import sys
sys.path.insert(0, sys.argv[1])
from pyaclnn import capi
from pyaclnn.capi import _accel
from test_capi_fastpath import outcome
mod = _accel.module()
assert mod is not None, _accel.why_unavailable
paths = ["/nonexistent/acl.json", "/nonexistent/caf\u00e9.json", "/nonexistent/a\0b", b"/nonexistent/b.json",
         "\ud800", bytearray(b"/x"), 5]
for fn in (capi.cfunc("aclInit"), _accel.wrap(capi.cfunc("aclInit"), mod)):
    for p in paths:
        msg = capi.cfunc("aclGetRecentErrMsg")()
        print(repr(outcome(fn, p)), repr(msg and msg[msg.index(b"aclInit("):]))   # without PID and time
"""
    rc, out, err = run_python(code, args=[str(Path(__file__).parent)])
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[:7] == lines[7:] and len(lines) == 14
    assert any("caf\\xc3\\xa9.json" in line for line in lines[:7])          # UTF-8 on the C side


@pytest.mark.parametrize("case", ["int", "masked", "negative", "none", "c_void_p", "array", "byref", "byref_offset",
                                  "pointer"])
def test_void_pointer_conversion(mod, case):
    """aclSetRawTensorAddr(tensor, void*) then aclGetRawTensorAddr: the address C received."""
    def run(api):
        one = (c_int64 * 1)(1)
        t = api.aclCreateTensor(one, 1, capi.ACL_FLOAT, one, 0, capi.ACL_FORMAT_ND, one, 1, 4096)
        target = c_uint64()
        arr = (ctypes.c_uint8 * 8)()
        value = {"int": 123456, "masked": 2 ** 64 + 99, "negative": -8, "none": None, "c_void_p": c_void_p(777),
                 "array": arr, "byref": byref(target), "byref_offset": byref(arr, 4),
                 "pointer": ctypes.pointer(target)}[case]
        status = api.aclSetRawTensorAddr(t, value)
        addr = c_void_p()
        got = api.aclGetRawTensorAddr(t, byref(addr)), addr.value
        api.aclDestroyTensor(t)
        relative = {ctypes.addressof(target): "target", ctypes.addressof(arr): "array",
                    ctypes.addressof(arr) + 4: "array + 4"}
        return status, (got[0], relative.get(got[1], got[1]))
    ref, got, fast = both(mod, run)
    assert got == ref
    assert fast.fallbacks() == 0


def test_pointer_to_pointer_out_parameter(mod):
    def run(api):
        dims = (c_int64 * 3)(4, 5, 6)
        t = api.aclCreateTensor(dims, 3, capi.ACL_FLOAT, (c_int64 * 3)(30, 6, 1), 0, capi.ACL_FORMAT_ND, dims, 3, 64)
        out, n = POINTER(c_int64)(), c_uint64()
        status = api.aclGetViewShape(t, byref(out), byref(n))
        wrong = outcome(api.aclGetViewShape, t, byref(c_void_p()), byref(n))   # void** for int64_t**
        api.aclDestroyTensor(t)
        return status, [out[i] for i in range(n.value)], wrong
    ref, got, _ = both(mod, run)
    assert got == ref and ref[1] == [4, 5, 6] and ref[2][0] == "raise"


def test_scalar_and_int_array_round_trip(mod):
    def run(api):
        v = c_double(2.5)
        s = api.aclCreateScalar(byref(v), capi.ACL_DOUBLE)
        s2 = api.aclCreateScalar(ctypes.cast(byref(v), c_void_p), capi.ACL_DOUBLE)
        vals = (c_int64 * 4)(1, 2, 3, 4)
        a = api.aclCreateIntArray(vals, 4)
        size = c_uint64()
        facts = [s is not None, s2 is not None, api.aclGetIntArraySize(a, byref(size)), size.value,
                 api.aclDestroyIntArray(a), api.aclDestroyScalar(s), api.aclDestroyScalar(s2),
                 api.aclDestroyScalar(s)]                    # twice: a status, not a crash
        return facts
    ref, got, _ = both(mod, run)
    assert got == ref and ref[3] == 4 and ref[-1] != 0


def test_wrapper_keeps_the_ctypes_face(mod):
    cf = capi.cfunc("aclCreateTensor")
    fn = _accel.wrap(cf, mod)
    assert fn.argtypes == cf.argtypes and fn.restype is cf.restype and fn.__name__ == "aclCreateTensor"
    assert fn.__doc__ == cf.__doc__ and "aclTensor* aclCreateTensor(const int64_t* viewDims" in fn.__doc__
    import pydoc
    assert "aclnn/acl_meta.h" in pydoc.render_doc(fn, renderer=pydoc.plaintext)
    # where C takes a function pointer, the wrapper passes as its ctypes function
    assert ctypes.cast(fn, c_void_p).value == ctypes.cast(cf, c_void_p).value


def test_setting_a_ctypes_attribute_turns_the_compiled_path_off(mod):
    cf = ctypes.CDLL(None).abs if hasattr(ctypes.CDLL(None), "abs") else None
    if cf is None:
        pytest.skip("no libc abs()")
    cf.restype, cf.argtypes = c_int, (c_int,)
    fn = _accel.wrap(cf, mod)
    assert fn.compiled and fn(-5) == 5
    fn.argtypes = (c_uint32,)                               # now ctypes decides: same as calling cf
    assert not fn.compiled and cf.argtypes == (c_uint32,)
    assert fn(-5) == cf(-5)


def test_unsupported_signatures_stay_ctypes(mod):
    libc = ctypes.CDLL(None)
    f = libc.strlen
    f.restype, f.argtypes = ctypes.c_size_t, (ctypes.c_char_p,)    # a plain char*: not a const char*
    assert _accel.wrap(f, mod) is f
    g = libc.abs
    g.restype, g.argtypes = c_int, (ctypes.c_bool,)
    assert _accel.wrap(g, mod) is g


def test_fastpath_off_keeps_the_ctypes_functions():
    code = """
import ctypes
from pyaclnn import capi
print(capi.aclDataTypeSize(capi.ACL_FLOAT), isinstance(capi.aclDataTypeSize, ctypes._CFuncPtr))
"""
    for var in ("PYACLNN_CAPI_FASTPATH", "PYACLNN_FASTPATH"):
        rc, out, err = run_python(code, {var: "0"})
        assert rc == 0, err
        assert out.split() == ["4", "True"], var


def test_built_whenever_the_prepared_call_accelerator_is():
    """Both extensions come from the same CMake condition (the Python development files); capi's also needs
    libffi's headers, and its reason says so when that alone is missing. Anything else is a broken build."""
    import os
    from pyaclnn.ops import _native
    if any(os.environ.get(v) for v in ("PYACLNN_FASTPATH", "PYACLNN_CAPI_FASTPATH", "PYACLNN_FASTCALL_LIB",
                                       "PYACLNN_CAPI_FAST_LIB")):
        pytest.skip("an accelerator is chosen or disabled by the environment")
    if _native.module() is None:
        assert _accel.module() is None, _native.why_unavailable
    elif _accel.module() is None:
        assert "libffi" in _accel.why_unavailable, _accel.why_unavailable


def test_a_build_for_another_python_is_named_as_such(tmp_path):
    """An accelerator built for another interpreter (another EXT_SUFFIX) is not loadable here: the reason
    says so and what to do, rather than "not built"."""
    from pyaclnn._extension import OptionalExtension

    class Probe(OptionalExtension):
        def candidates(self):
            return [tmp_path / self.filename()]

    probe = Probe("_pyaclnn_probe", 1, "PYACLNN_PROBE_LIB", (), lambda module, path: None)
    other = tmp_path / "_pyaclnn_probe.cpython-399-x86_64-linux-gnu.so"
    other.write_bytes(b"")
    assert probe.module() is None
    assert other.name in probe.why_unavailable and "another Python" in probe.why_unavailable
    assert "pip install -e ." in probe.why_unavailable
    assert probe.status() == {"active": False, "why": probe.why_unavailable}


def test_info_says_whether_the_accelerators_are_active():
    import json
    from helpers import run_module
    rc, out, err = run_module(["pyaclnn", "info", "--json"], {"PYACLNN_BACKEND": "stub"})
    assert rc == 0, err
    acc = json.loads(out)["accelerators"]
    assert set(acc) == {"_pyaclnn_fastcall", "_pyaclnn_capi"}
    assert acc["_pyaclnn_capi"]["active"] == (_accel.module() is not None)
    rc, out, err = run_module(["pyaclnn", "info", "--json"], {"PYACLNN_BACKEND": "stub", "PYACLNN_FASTPATH": "0"})
    acc = json.loads(out)["accelerators"]
    assert acc["_pyaclnn_fastcall"] == {"active": False, "why": "disabled by PYACLNN_FASTPATH=0"}
