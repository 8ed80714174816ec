"""Path-valued environment variables, checked before use.

A path the system cannot take (longer than ``PATH_MAX``, or a component longer than ``NAME_MAX``)
made the first ``stat`` fail with a bare ``OSError: [Errno 36] File name too long`` that named no
variable. :func:`path` and :func:`path_list` refuse such a value with a
:class:`~pyaclnn.errors.ConfigError` naming the variable and what it should hold.
"""
from __future__ import annotations

import errno
import os

# What each path variable pyaclnn reads should hold (the error messages say it).
EXPECTED = {
    "ASCEND_HOME_PATH": "the root of a CANN toolkit, e.g. /usr/local/Ascend/ascend-toolkit/latest (its "
                        "set_env.sh sets it)",
    "ASCEND_TOOLKIT_HOME": "the root of a CANN toolkit, e.g. /usr/local/Ascend/ascend-toolkit/latest (its "
                           "set_env.sh sets it)",
    "ASCEND_OPP_PATH": "the toolkit's operator package directory, <toolkit root>/opp",
    "ASCEND_CUSTOM_OPP_PATH": "a ':'-separated list of custom operator package roots (each holding op_api/)",
    "PYACLNN_STUB_LIBDIR": "the directory of the emulator's libascendcl.so, libnnopbase.so and libopapi.so "
                           "(a build's lib directory)",
    "PYACLNN_CAPI_FAST_LIB": "the file of a prebuilt capi accelerator module (_pyaclnn_capi<EXT_SUFFIX>)",
    "PYACLNN_FASTCALL_LIB": "the file of a prebuilt prepared-call accelerator module (_pyaclnn_fastcall<EXT_SUFFIX>)",
    "PYACLNN_TOOLKIT_DIR": "a writable directory for the emulated toolkit tree",
    "PYACLNN_CACHE_DIR": "a writable directory for pyaclnn's cache of parsed operator headers",
    "XDG_CACHE_HOME": "the user's cache directory (default ~/.cache)",
}


def _limit(name: str, default: int) -> int:
    try:
        value = os.pathconf("/", name)
    except (OSError, ValueError):
        return default
    return value if value and value > 0 else default


PATH_MAX = _limit("PC_PATH_MAX", 4096)       # bytes, the terminating NUL included
NAME_MAX = _limit("PC_NAME_MAX", 255)        # bytes of one path component


def check(variable: str, value: str) -> str:
    """``value`` (one path of ``variable``) if the system can take it, else ConfigError."""
    raw = os.fsencode(value)
    longest = max((len(c) for c in raw.split(b"/")), default=0)
    if len(raw) < PATH_MAX and longest <= NAME_MAX:
        return value
    from .errors import ConfigError   # (not at import: errors -> capi -> the catalog's path -> here)
    what = EXPECTED.get(variable, "a path")
    start = value[:40] + ("..." if len(value) > 40 else "")
    problem = (f"it is {len(raw)} bytes long" if len(raw) >= PATH_MAX
               else f"one of its components is {longest} bytes long")
    raise ConfigError(variable, errno.ENAMETOOLONG,
                      f"{variable} is not a usable path: {problem} ({start!r}), and a path may have at most "
                      f"{PATH_MAX - 1} bytes, {NAME_MAX} per component. Set {variable} to {what}, or unset it.")


def path(variable: str) -> str | None:
    """The value of a path variable (None when unset or empty), checked."""
    value = os.environ.get(variable)
    return check(variable, value) if value else None


def path_list(variable: str) -> list[str]:
    """The non-empty entries of a ':'-separated path variable, each checked."""
    return [check(variable, entry) for entry in os.environ.get(variable, "").split(":") if entry]


__all__ = ["EXPECTED", "NAME_MAX", "PATH_MAX", "check", "path", "path_list"]
