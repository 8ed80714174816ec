"""Binding one C function of the prototype table to the loaded libraries, and what help() says about it.

Kept apart from the package ``__init__`` so that the module namespace (the C names) stays free of
helpers. Nothing here loads a library until :func:`bind` is called.
"""
from __future__ import annotations

import inspect
from ctypes import c_char_p

from .._exceptions import ArgumentTypeError
from ._functions import DECLARATIONS, PROTOTYPES, SOURCES


class const_char_p(c_char_p):
    """Argument type of ``const char*`` parameters: ``str`` (sent as UTF-8), ``bytes`` or ``None``.

    The prototype table keeps ``c_char_p`` (what the header says); binding swaps this in, so that
    ``aclInit("acl.json")`` works as ``aclInit(b"acl.json")`` does.
    """

    @classmethod
    def from_param(cls, value):
        if isinstance(value, str):
            value = value.encode("utf-8")
        try:
            return c_char_p.from_param(value)
        except TypeError:
            raise ArgumentTypeError(f"a const char* parameter takes str, bytes or None, not "
                                    f"{type(value).__name__}") from None


def _c_params(declaration: str) -> list[str]:
    """The parameter types of a normalised declaration: 'aclError aclInit(const char*);' -> ['const char*']."""
    inner = declaration[declaration.index("(") + 1:declaration.rindex(")")].strip()
    return [] if inner in ("", "void") else [a.strip() for a in inner.split(",")]


def argtypes_of(name: str) -> tuple:
    """PROTOTYPES' argtypes with ``const char*`` parameters accepting ``str`` as well."""
    _, argtypes = PROTOTYPES[name]
    params = _c_params(DECLARATIONS[name])
    return tuple(const_char_p if " ".join(p.split()) == "const char*" else t
                 for p, t in zip(params, argtypes))


def param_names(name: str) -> list[str]:
    """C parameter names of the header's prototype (``arg<i>`` where the header names none)."""
    proto = SOURCES[name][0]
    inner = proto[proto.index("(") + 1:proto.rindex(")")].strip()
    if inner in ("", "void"):
        return []
    out = []
    for i, param in enumerate(inner.split(",")):
        words = param.replace("*", " ").split()
        out.append(words[-1] if len(words) > 1 and words[-1].isidentifier() else f"arg{i}")
    return out


def signature(name: str) -> inspect.Signature:
    return inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY)
                              for p in param_names(name)])


def docstring(name: str) -> str:
    proto, header = SOURCES[name]
    where = f"Declared in {header}." if header else "Declared in the CANN headers."
    return (f"{proto};\n\n{where}\n"
            "Called as in C: returns what C returns (status codes as ints, handles as ints or None).\n"
            "const char* parameters take str (sent as UTF-8), bytes or None; out-parameters (T*, T**)\n"
            "take ctypes.byref(x) where C passes &x.")


def bind(name: str):
    """The ctypes function for C function ``name`` of the loaded libraries, with restype, argtypes
    and docstring set; a function the libraries lack becomes a callable raising
    :class:`~pyaclnn.errors.MissingSymbolError` when called (so binding never fails)."""
    from .._loader import backend
    from ..errors import MissingSymbolError
    restype, _ = PROTOTYPES[name]
    try:
        fn = backend().symbol(name)
    except MissingSymbolError as exc:
        missing = exc

        def fn(*args, _exc=missing):
            raise _exc
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = docstring(name) + "\n\nNot exported by the loaded libraries: calling it raises."
        fn.missing = True
        return fn
    fn.restype = restype
    fn.argtypes = argtypes_of(name)
    fn.__doc__ = docstring(name)
    return fn
