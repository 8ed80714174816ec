"""Data model of an aclnn operator signature: what a generic launcher needs to marshal a call.

Everything here is immutable and converts to and from plain dicts (JSON), so a registry can be
shipped as a file and compared with a fresh parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping

from .._exceptions import InvalidArgumentError, NotFoundError


class Kind(str, Enum):
    """What a parameter of ``aclnnXxxGetWorkspaceSize`` carries (decided by its C type)."""

    TENSOR = "tensor"              # aclTensor*
    TENSOR_LIST = "tensor_list"    # aclTensorList*
    SCALAR = "scalar"              # aclScalar*
    SCALAR_LIST = "scalar_list"    # aclScalarList*
    INT_ARRAY = "int_array"        # aclIntArray*
    FLOAT_ARRAY = "float_array"    # aclFloatArray*
    BOOL_ARRAY = "bool_array"      # aclBoolArray*
    DOUBLE = "double"
    FLOAT = "float"
    INT = "int"                    # any integer by value; the width is in Param.ctype
    BOOL = "bool"
    STRING = "string"              # char* / const char*: a NUL-terminated host string
    DTYPE = "dtype"                # aclDataType by value
    ENUM = "enum"                  # another enum by value (a C int)
    POINTER = "pointer"            # void* and other raw pointers, handle typedefs such as aclrtStream
    WORKSPACE_SIZE = "workspace_size"  # the trailing uint64_t* out-parameter
    EXECUTOR = "executor"          # the trailing aclOpExecutor** out-parameter
    UNKNOWN = "unknown"            # a by-value type this parser cannot size: the op is not callable

    def __str__(self) -> str:
        return self.value


class Role(str, Enum):
    """Data direction of a parameter, seen from the caller."""

    IN = "in"
    OUT = "out"
    INOUT = "inout"  # read and written in place ("Ref" tensors)

    def __str__(self) -> str:
        return self.value


#: Kinds that hold device tensors (the only kinds that can be outputs other than the trailing pair).
TENSOR_KINDS = frozenset({Kind.TENSOR, Kind.TENSOR_LIST})
#: Kinds passed by pointer, hence the only ones that can be NULL ("optional").
POINTER_KINDS = frozenset({
    Kind.TENSOR, Kind.TENSOR_LIST, Kind.SCALAR, Kind.SCALAR_LIST, Kind.INT_ARRAY,
    Kind.FLOAT_ARRAY, Kind.BOOL_ARRAY, Kind.STRING, Kind.POINTER,
})
#: The two trailing out-parameters every GetWorkspaceSize function ends with.
TRAILING_KINDS = frozenset({Kind.WORKSPACE_SIZE, Kind.EXECUTOR})


@dataclass(frozen=True)
class Param:
    """One parameter of a GetWorkspaceSize prototype.

    ``ctype`` is normalised: one space between words, ``*`` glued to the type, ``const`` kept only
    where it qualifies the pointee (``const aclTensor*``), top-level ``const`` dropped (not ABI).
    """

    name: str
    ctype: str
    kind: Kind
    role: Role = Role.IN
    optional: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ctype": self.ctype, "kind": self.kind.value,
                "role": self.role.value, "optional": self.optional}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Param":
        return cls(name=str(d["name"]), ctype=str(d["ctype"]), kind=Kind(d["kind"]),
                   role=Role(d.get("role", "in")), optional=bool(d.get("optional", False)))


@dataclass(frozen=True)
class OpSignature:
    """The phase-1 prototype of one operator, ``<name>GetWorkspaceSize(params...)``.

    Attributes
    ----------
    name:
        The phase-2 function name, e.g. ``aclnnAmpUpdateScale``; phase 1 is ``name + "GetWorkspaceSize"``.
    params:
        Every parameter in C order, including the trailing workspace-size and executor out-params.
    header:
        The header that declares it (path relative to the parsed directory, ``/``-separated).
    has_launch:
        True when the header also declares phase 2, ``name(void*, uint64_t, aclOpExecutor*, aclrtStream)``.
    domain:
        The ``@domain`` tag of the doc comment (names the per-domain library in split installs), if any.
    notes:
        Human-readable remarks on anything not read directly from the prototype (roles inferred by
        position, missing trailing out-params, unknown types). Empty in the ordinary case.
    """

    name: str
    params: tuple[Param, ...]
    header: str
    has_launch: bool = True
    domain: str | None = None
    notes: tuple[str, ...] = field(default=())

    # -- convenient views ---------------------------------------------------------------------------
    @property
    def workspace_function(self) -> str:
        return self.name + "GetWorkspaceSize"

    @property
    def op_name(self) -> str:
        """The operator name without the ``aclnn`` prefix (``AmpUpdateScale``)."""
        return self.name[len("aclnn"):] if self.name.startswith("aclnn") else self.name

    @property
    def user_params(self) -> tuple[Param, ...]:
        """The parameters a caller supplies: all but the trailing workspace-size/executor pair."""
        return tuple(p for p in self.params if p.kind not in TRAILING_KINDS)

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.user_params if p.role is Role.IN)

    @property
    def outputs(self) -> tuple[Param, ...]:
        """Tensors written by the operator (``out`` and ``inout``)."""
        return tuple(p for p in self.user_params if p.role is not Role.IN)

    @property
    def fully_classified(self) -> bool:
        """Every parameter has a known kind and the prototype ends with the standard out-pair."""
        kinds = [p.kind for p in self.params]
        return (Kind.UNKNOWN not in kinds and kinds[-2:] == [Kind.WORKSPACE_SIZE, Kind.EXECUTOR])

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise NotFoundError(f"{self.name} has no parameter {name!r}")

    # -- serialisation ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "header": self.header, "has_launch": self.has_launch,
                "domain": self.domain, "notes": list(self.notes),
                "params": [p.to_dict() for p in self.params]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OpSignature":
        return cls(name=str(d["name"]), params=tuple(Param.from_dict(p) for p in d["params"]),
                   header=str(d["header"]), has_launch=bool(d.get("has_launch", True)),
                   domain=d.get("domain"), notes=tuple(d.get("notes", ())))


REGISTRY_FORMAT = 1


def registry_to_dict(ops: Mapping[str, OpSignature] | Iterable[OpSignature], source: str = "") -> dict[str, Any]:
    """A JSON-ready document holding many signatures, sorted by name so files diff cleanly."""
    sigs = ops.values() if isinstance(ops, Mapping) else ops
    return {"format": REGISTRY_FORMAT, "source": source,
            "ops": {s.name: s.to_dict() for s in sorted(sigs, key=lambda s: s.name)}}


def registry_from_dict(doc: Mapping[str, Any]) -> dict[str, OpSignature]:
    if doc.get("format") != REGISTRY_FORMAT:
        raise InvalidArgumentError(f"unsupported signature registry format {doc.get('format')!r}")
    return {name: OpSignature.from_dict(d) for name, d in doc["ops"].items()}
