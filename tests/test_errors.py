"""pyaclnn.errors: code -> name and family, the vendor message, check()."""
from __future__ import annotations

import ast
import builtins
import pickle
import threading
from ctypes import byref, c_int
from pathlib import Path

import pytest

from pyaclnn import capi, errors
from pyaclnn.errors import (AclApiError, AclError, AclGeError, AclInitError, AclnnError,
                            AclnnInnerError, AclnnParamError, AclRuntimeError, MissingSymbolError,
                            check, status_name)


@pytest.mark.parametrize("code, name", [
    (0, "ACL_SUCCESS"),
    (100000, "ACL_ERROR_INVALID_PARAM"),
    (100002, "ACL_ERROR_REPEAT_INITIALIZE"),
    (107000, "ACL_ERROR_RT_PARAM_INVALID"),
    (107002, "ACL_ERROR_RT_CONTEXT_NULL"),
    (207001, "ACL_ERROR_RT_MEMORY_ALLOCATION"),
    (507035, "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION"),
    (161001, "ACLNN_ERR_PARAM_NULLPTR"),
    (161002, "ACLNN_ERR_PARAM_INVALID"),
    (361001, "ACLNN_ERR_RUNTIME_ERROR"),
    (561002, "ACLNN_ERR_INNER_TILING_ERROR"),
    (561103, "ACLNN_ERR_INNER_NULLPTR"),
    (561105, "ACLNN_ERR_INNER_KEY_CONFLICT"),       # not the misspelled alias
    (500002, "ACL_ERROR_GE_FAILURE"),
    (145000, "ACL_ERROR_GE_PARAM_INVALID"),
])
def test_status_name(code, name):
    assert status_name(code) == name


def test_unknown_code_name():
    assert status_name(123456) == "UNKNOWN_STATUS_123456"


@pytest.mark.parametrize("code, cls", [
    (100000, AclApiError), (100001, AclInitError), (100002, AclInitError), (100037, AclInitError),
    (200000, AclApiError), (500001, AclApiError),
    (107000, AclRuntimeError), (207001, AclRuntimeError), (507899, AclRuntimeError),
    (161001, AclnnParamError), (161002, AclnnParamError), (361001, AclnnError),
    (561002, AclnnInnerError), (145000, AclGeError), (545000, AclGeError),
])
def test_family(code, cls):
    err = errors.make_error(code, "f", message="m")
    assert type(err) is cls and isinstance(err, AclError)
    assert err.code == code and err.func == "f" and err.message == "m"
    assert err.name == status_name(code)


def test_every_known_code_has_a_family():
    for family in ("acl_error", "rt_error", "ge_error", "aclnn_status"):
        for name, code in capi.ENUM_MEMBERS[family].items():
            if code:
                assert isinstance(errors.make_error(code, message=""), AclError), name


def test_error_text_names_everything():
    err = AclRuntimeError(107002, "aclrtGetDevice", "aclrtGetDevice failed: no context")
    text = str(err)
    assert "aclrtGetDevice failed: ACL_ERROR_RT_CONTEXT_NULL (107002)" in text
    assert "no context" in text and "aclrtSetDevice" in text            # vendor message + hint


def test_pickle_roundtrip():
    err = AclnnParamError(161002, "aclnnFooGetWorkspaceSize", "dtype not supported")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is AclnnParamError
    assert (back.code, back.func, back.message) == (161002, "aclnnFooGetWorkspaceSize",
                                                   "dtype not supported")


def test_check_success_returns_zero():
    assert check(0, "anything") == 0


def test_check_reads_the_vendor_message(acl):
    with pytest.raises(AclApiError) as info:
        check(capi.aclrtFree(None), "aclrtFree")
    err = info.value
    assert err.code == capi.ACL_ERROR_INVALID_PARAM and err.func == "aclrtFree"
    assert err.message and "aclrtFree" in err.message
    assert errors.recent_error_message() is None       # consumed by check()


def test_check_aclnn_status(acl):
    with pytest.raises(AclnnParamError) as info:
        check(capi.aclGetDataType(None, byref(c_int())), "aclGetDataType")
    assert info.value.name == "ACLNN_ERR_PARAM_NULLPTR"
    assert "aclGetDataType" in (info.value.message or "")


def test_message_is_thread_local(acl):
    def fail_elsewhere():
        capi.aclrtFree(None)          # leaves its message on that thread only
    errors.recent_error_message()     # start clean on this thread
    t = threading.Thread(target=fail_elsewhere)
    t.start()
    t.join()
    with pytest.raises(AclError) as info:
        check(capi.ACL_ERROR_INVALID_PARAM, "nothing")
    assert info.value.message is None


def test_missing_symbol_error_text():
    err = MissingSymbolError("aclnnFoo", ["/x/libascendcl.so", "/x/libopapi.so"], "cann")
    assert err.func == "aclnnFoo" and err.libraries == ["/x/libascendcl.so", "/x/libopapi.so"]
    assert "aclnnFoo" in str(err) and "/x/libopapi.so" in str(err)
    assert not isinstance(err, AclError)


# ---- one hierarchy: everything pyaclnn raises is a PyaclnnError (and the builtin that fits) --------------

_PACKAGE = Path(errors.__file__).resolve().parent
_BUILTIN = {name for name in dir(builtins) if isinstance(getattr(builtins, name), type)
            and issubclass(getattr(builtins, name), BaseException)} - {"KeyboardInterrupt", "SystemExit",
                                                                       "StopIteration", "GeneratorExit",
                                                                       "AssertionError"}   # (a bug of ours)


def _raised_builtins(source: str) -> list[tuple[int, str]]:
    """(line, name) of each `raise Builtin` and each `Builtin(...)` made anywhere (a helper that returns
    one for its caller to raise counts too) in a module's source."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        target = None
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        elif isinstance(node, ast.Call):
            target = node.func
        if isinstance(target, ast.Name) and target.id in _BUILTIN:
            found.add((node.lineno, target.id))
    return sorted(found)


def test_the_walker_finds_a_raised_builtin():
    assert _raised_builtins("def f():\n    raise ValueError('x')\n") == [(2, "ValueError")]
    assert _raised_builtins("def f():\n    return RuntimeError('x')\n") == [(2, "RuntimeError")]
    assert _raised_builtins("try:\n    pass\nexcept ValueError:\n    raise\n") == []


def test_the_package_raises_only_its_own_exception_types():
    offenders = [f"{path.relative_to(_PACKAGE.parent)}:{line}: raise {name}"
                 for path in sorted(_PACKAGE.rglob("*.py"))
                 for line, name in _raised_builtins(path.read_text())]
    assert not offenders, ("raise a pyaclnn.errors type (a PyaclnnError and the matching builtin) instead:\n"
                           + "\n".join(offenders))


def test_every_exception_type_of_the_package_is_a_pyaclnn_error():
    from pyaclnn import _cint, _shutdown
    from pyaclnn.ops._errors import OperatorNotFoundError
    types = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, BaseException)]
    types += [_cint.CIntRangeError, _shutdown.ShuttingDownError, OperatorNotFoundError]
    assert len(types) > 15
    for cls in types:
        assert issubclass(cls, errors.PyaclnnError), cls
    # and the builtin each one also is, so `except ValueError` and friends keep working
    assert issubclass(errors.CIntRangeError, OverflowError) and issubclass(errors.CIntRangeError, ValueError)
    assert issubclass(errors.ShuttingDownError, RuntimeError) and issubclass(errors.ClosedError, RuntimeError)
    assert issubclass(errors.InvalidArgumentError, ValueError) and issubclass(errors.ArgumentTypeError, TypeError)
    assert str(errors.NotFoundError("no such operator")) == "no such operator"     # not KeyError's quoted repr


def test_closed_objects_raise_closed_error(acl):
    import numpy as np
    import pyaclnn
    from pyaclnn import runtime
    s = runtime.Stream()
    s.close()
    with pytest.raises(errors.ClosedError, match="stream is closed"):
        s.synchronize()
    e = runtime.Event()
    e.close()
    with pytest.raises(errors.ClosedError, match="event is closed"):
        e.synchronize()
    with pytest.raises(errors.ClosedError, match="stream of this memory pool is closed"):
        pyaclnn.from_numpy(np.ones(2, np.float32), stream=s)


def test_argument_errors_name_what_is_valid(acl):
    import numpy as np
    import pyaclnn
    with pytest.raises(errors.IndexOutOfRangeError, match="out of bounds for dimension 0 of size 2"):
        pyaclnn.from_numpy(np.ones((2, 2), np.float32))[5]
    with pytest.raises(errors.CIntRangeError, match="at most 9223372036854775807"):
        pyaclnn.empty((2**70,), "float32")
