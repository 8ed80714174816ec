"""Rules that turn C parameter declarations into kinds, roles and optionality.

The rules were derived from every aclnn header of hicann/ops-nn, hicann/ops-math and a CANN 8.1.RC1
install (about 2,300 prototypes); none of them names an operator.

Kind: from the C type alone (the trailing ``uint64_t*`` / ``aclOpExecutor**`` pair by position).

Role (tensors and tensor lists only; everything else is an input). The headers come in two styles:
hand-written ones declare outputs ``aclTensor*`` and inputs ``const aclTensor*``; generated ones declare
every tensor ``const aclTensor*`` and name outputs ``...Out`` (or ``out``) and in-place inputs ``...Ref``.
Neither mark is reliable alone (``const aclTensor* gradOut`` is an input; BatchNorm's ``aclTensor*
runningMean`` is updated in place, among the inputs), but the layout is: every prototype is
``inputs, attributes, outputs[, trailing attributes such as cubeMathType]``. So, with "the trailing
run" meaning the last run of consecutive tensors, past any trailing attributes:

1. a tensor named ``...Ref`` (``selfRef``, ``varRefOptional``) is ``inout``;
2. outputs: if any tensor is declared without ``const``, the longest tail of the trailing run made of
   non-const or Out-named tensors; otherwise (all ``const``) the trailing run from its first
   Out-named tensor on (``attentionOut, softmaxLse``);
3. a non-const tensor outside the outputs is ``inout`` (``runningMean``);
4. operators named ``...Inplace...`` (``aclnnInplaceAdd``, ``aclnnForeachZeroInplace``) write their
   ``Ref`` tensor, or else their first tensor (``self``, ``data`` ...); only Out-named tensors are
   further outputs and rule 3 does not apply (``aclnnInplaceAtan2`` declares its input non-const);
5. when nothing above marks any tensor (all ``const``, no Out/Ref names): a generated header
   (recognised by its doc comment) has no output; in a hand-written one the outputs are the
   trailing run, or only its last tensor when no attribute separates it from the inputs. The
   signature carries a note saying so.

Optional: a pointer parameter whose name ends in ``Optional`` (the convention of both styles), or
whose doc comment says it may be a null pointer (``outputMask`` of AddRmsNormDynamicQuantV2:
"支持传空指针"), or an aclTensor/aclScalar/array parameter the doc comment calls optional
("可选参数", generated "x : optional").
By-value attributes named ``...Optional`` (generated headers use that for attributes with a default)
are not optional: NULL cannot be passed for an ``int64_t``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cheader import CParam
from .model import POINTER_KINDS, TENSOR_KINDS, Kind, Param, Role

_OPAQUE_POINTER_KINDS = {
    "aclTensor": Kind.TENSOR, "aclTensorList": Kind.TENSOR_LIST, "aclScalar": Kind.SCALAR,
    "aclScalarList": Kind.SCALAR_LIST, "aclIntArray": Kind.INT_ARRAY,
    "aclFloatArray": Kind.FLOAT_ARRAY, "aclBoolArray": Kind.BOOL_ARRAY,
}
_INT_WORDS = frozenset({"signed", "unsigned", "short", "int", "long", "char"})
_INT_TYPEDEFS = frozenset({
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "aclFloat16",
})
#: Enums of the public CANN headers (include/acl, include/aclnn) that an operator may take by value.
KNOWN_ENUMS = frozenset({
    "aclFormat", "aclMemType", "aclLogLevel", "aclrtMemcpyKind", "aclrtMemMallocPolicy",
    "aclrtMemAttr", "aclrtRunMode", "aclrtEventStatus", "aclrtEventRecordedStatus",
    "aclrtEventWaitStatus", "aclrtStreamStatus", "aclrtLastErrLevel",
})
#: Kinds for which "optional" in a doc comment means "may be NULL" (for a string it means "has a default").
_OBJECT_KINDS = frozenset(_OPAQUE_POINTER_KINDS.values())
#: Typedefs of pointers (handles) passed by value.
_HANDLE_TYPEDEFS = frozenset({"aclrtStream", "aclrtEvent", "aclrtContext", "aclrtNotify"})

_REF_NAME = re.compile(r"(?:Ref|_ref)(?:Optional|_optional)?$")
_OUT_NAME = re.compile(r"(?:^out|Out|_out)(?:Optional|_optional)?$")
_OPTIONAL_NAME = re.compile(r"(?:Optional|_optional)$")
# "Inplace" as a word of the operator name: aclnnInplaceAdd, aclnnForeachZeroInplace, aclnnQuantMatmulInplaceAdd.
_INPLACE_OP = re.compile(r"(?:^aclnn|[a-z0-9])Inplace(?:[A-Z0-9]|$)")


def kind_of(p: CParam, position: int, count: int, enums: frozenset[str] = frozenset()) -> Kind:
    """The kind of parameter ``position`` (0-based) of ``count`` parameters."""
    base, ptr = p.base, p.pointers
    if ptr == 2 and base == "aclOpExecutor" and position == count - 1:
        return Kind.EXECUTOR
    if ptr == 1 and base == "uint64_t" and position == count - 2:
        return Kind.WORKSPACE_SIZE
    if ptr == 1:
        if base in _OPAQUE_POINTER_KINDS:
            return _OPAQUE_POINTER_KINDS[base]
        if base == "char":
            return Kind.STRING
    if ptr:
        return Kind.POINTER
    if base == "double":
        return Kind.DOUBLE
    if base == "float":
        return Kind.FLOAT
    if base in ("bool", "_Bool"):
        return Kind.BOOL
    if base in _INT_TYPEDEFS or (base and set(base.split()) <= _INT_WORDS):
        return Kind.INT
    if base == "aclDataType":
        return Kind.DTYPE
    if base in KNOWN_ENUMS or base in enums:
        return Kind.ENUM
    if base in _HANDLE_TYPEDEFS:
        return Kind.POINTER
    return Kind.UNKNOWN


@dataclass(frozen=True)
class _Draft:
    name: str
    ctype: str
    kind: Kind
    pointee_const: bool


def classify(op: str, cparams: list[CParam], *, doc_null: frozenset[str] = frozenset(),
             doc_optional: frozenset[str] = frozenset(), generated: bool = False,
             enums: frozenset[str] = frozenset(),
             ) -> tuple[tuple[Param, ...], tuple[str, ...]]:
    """Kinds, roles and optionality of every parameter of ``<op>GetWorkspaceSize``.

    ``doc_null`` / ``doc_optional``: parameters the doc comment says may be NULL / calls optional;
    ``generated``: the doc comment is the op-build tool's (whose names mark every output);
    ``enums``: extra enum type names.
    Returns the parameters and the notes to attach to the signature.
    """
    notes: list[str] = []
    drafts = []
    for i, cp in enumerate(cparams):
        name = cp.name or f"arg{i}"
        drafts.append(_Draft(name, cp.ctype, kind_of(cp, i, len(cparams), enums), cp.pointee_const))
    roles, role_notes = _roles(op, drafts, generated)
    notes += role_notes
    params = []
    for d, role in zip(drafts, roles):
        optional = d.kind in POINTER_KINDS and bool(
            _OPTIONAL_NAME.search(d.name) or d.name in doc_null
            or (d.name in doc_optional and d.kind in _OBJECT_KINDS))
        params.append(Param(d.name, d.ctype, d.kind, role, optional))
    unnamed = [f"arg{i}" for i, cp in enumerate(cparams) if cp.name is None]
    if unnamed:
        notes.append(f"unnamed parameters, called {', '.join(unnamed)}")
    unknown = [f"{d.name} ({d.ctype})" for d in drafts if d.kind is Kind.UNKNOWN]
    if unknown:
        notes.append(f"parameters of unknown type: {', '.join(unknown)}")
    kinds = [d.kind for d in drafts]
    if kinds[-2:] != [Kind.WORKSPACE_SIZE, Kind.EXECUTOR]:
        notes.append("does not end with (uint64_t* workspaceSize, aclOpExecutor** executor)")
    return tuple(params), tuple(notes)


def _roles(op: str, drafts: list[_Draft], generated: bool) -> tuple[list[Role], list[str]]:
    roles = [Role.OUT if d.kind in (Kind.WORKSPACE_SIZE, Kind.EXECUTOR) else Role.IN for d in drafts]
    user = [i for i, d in enumerate(drafts) if d.kind not in (Kind.WORKSPACE_SIZE, Kind.EXECUTOR)]
    tensors = [i for i in user if drafts[i].kind in TENSOR_KINDS]
    if not tensors:
        return roles, []
    run = _trailing_tensor_run(drafts, user)
    inplace = bool(_INPLACE_OP.search(op))

    for i in tensors:                                                       # rule 1
        if _REF_NAME.search(drafts[i].name):
            roles[i] = Role.INOUT
    outputs = _marked_outputs(drafts, tensors, run)                         # rule 2
    if inplace:
        outputs = [i for i in outputs if _OUT_NAME.search(drafts[i].name)]
    for i in outputs:
        if roles[i] is Role.IN:
            roles[i] = Role.OUT
    if inplace:                                                             # rule 4
        if Role.INOUT not in roles:
            roles[tensors[0]] = Role.INOUT
        return roles, []
    for i in tensors:                                                       # rule 3
        if roles[i] is Role.IN and not drafts[i].pointee_const:
            roles[i] = Role.INOUT
    if any(roles[i] is not Role.IN for i in tensors):
        return roles, []

    if generated:                                                           # rule 5
        return roles, ["generated header without any Out/Ref tensor: no outputs"]
    outputs = run[-1:] if run[0] == tensors[0] else run
    for i in outputs:
        roles[i] = Role.OUT
    names = ", ".join(drafts[i].name for i in outputs)
    return roles, [f"no tensor is marked as output (all const, no Out/Ref suffix): "
                   f"output role of {names} inferred from position"]


def _marked_outputs(drafts: list[_Draft], tensors: list[int], run: list[int]) -> list[int]:
    """Rule 2: the outputs that const-ness and Out names mark at the end of the trailing run."""
    def out_named(i: int) -> bool:
        return bool(_OUT_NAME.search(drafts[i].name))

    if any(not drafts[i].pointee_const for i in tensors):       # hand-written style
        k = len(run)
        while k > 0 and (not drafts[run[k - 1]].pointee_const or out_named(run[k - 1])):
            k -= 1
        return run[k:]
    first_out = next((k for k, i in enumerate(run) if out_named(i)), None)  # all const
    return run[first_out:] if first_out is not None else []


def _trailing_tensor_run(drafts: list[_Draft], user: list[int]) -> list[int]:
    """The last run of consecutive tensor parameters, past any trailing attributes (``cubeMathType``)."""
    pos = len(user) - 1
    while pos >= 0 and drafts[user[pos]].kind not in TENSOR_KINDS:
        pos -= 1
    run = []
    while pos >= 0 and drafts[user[pos]].kind in TENSOR_KINDS:
        run.append(user[pos])
        pos -= 1
    return run[::-1]

