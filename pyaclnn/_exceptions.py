"""The exception types every part of pyaclnn raises, each a :class:`PyaclnnError` and the builtin
exception that fits (so ``except ValueError`` keeps working). A leaf module: the C-API mirror and the
loaders import it without importing anything else of the package. :mod:`pyaclnn.errors` re-exports
these beside the status-code families (:class:`~pyaclnn.errors.AclError` and friends).
"""
from __future__ import annotations


class PyaclnnError(Exception):
    """Base of every exception raised by pyaclnn."""


class BackendError(PyaclnnError, RuntimeError):
    """No usable set of CANN libraries (or a bad ``PYACLNN_BACKEND`` value), or a backend that cannot do
    what was asked."""


class EmulatorOnlyError(BackendError):
    """A feature of the CPU emulator (host memory registration, live-object counts) asked of a real toolkit."""


class ClosedError(PyaclnnError, RuntimeError):
    """A pyaclnn object (tensor, stream, event, device, prepared call ...) was used after ``close()`` or
    after what it lives on was released."""


class ShuttingDownError(PyaclnnError, RuntimeError):
    """A launch was attempted while the interpreter is exiting."""


class InvalidArgumentError(PyaclnnError, ValueError):
    """An argument holds a value the call cannot take; the message says what would be valid."""


class ArgumentTypeError(PyaclnnError, TypeError):
    """An argument of a type the call cannot take; the message says which types it takes."""


class CIntRangeError(InvalidArgumentError, OverflowError):
    """An integer does not fit the C type it is passed as (an OverflowError and a ValueError)."""


class IndexOutOfRangeError(PyaclnnError, IndexError):
    """An index (of a tensor, a dimension) outside its range."""


class NotFoundError(PyaclnnError, KeyError):
    """A name looked up in a table of pyaclnn's (an operator, a parameter) that is not in it."""

    def __str__(self) -> str:       # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NoAttributeError(PyaclnnError, AttributeError):
    """A module attribute pyaclnn does not have (its lazy ``__getattr__``)."""


class UnsupportedError(PyaclnnError, NotImplementedError):
    """A case pyaclnn does not handle (yet); the message names it."""


class MissingPathError(PyaclnnError, FileNotFoundError):
    """A file or directory pyaclnn needs is not there (e.g. the bundled stub was not built)."""


class NotADirectoryPathError(PyaclnnError, NotADirectoryError):
    """A path given as a directory is not one."""
