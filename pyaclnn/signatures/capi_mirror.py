"""The ctypes mirror of pyaclnn.capi (``_functions.py``, ``_constants.py``, ``_enums.py``), generated from a
header tree by :mod:`.declarations`.

The tree is the stub's public headers (``pyaclnn.get_include()``: native_stubs/include, the copies of
the vendor's, plus the operator headers the build generates); tests/test_headers.py holds them to the
vendor's measured declarations (tests/data/real_headers.txt), tests/test_capi.py holds the checked-in
files to this generator's output. ::

    python -m pyaclnn.signatures capi [--headers DIR] [--out DIR] [--check]

What is mirrored is :data:`MIRRORED`: the names whose real declarations tests/data/real_headers.txt
lists (:data:`MEASURED`) but the operators, which capi takes from the operator registry, plus
:data:`BEYOND_MEASURED`. C types map to ctypes through the headers' own typedefs: an
opaque ``struct X`` travels as ``c_void_p``, every other typedef as the ctypes alias of the same name
in ``pyaclnn/capi/_types.py``.

The three files are checked in and the build holds them to the headers (opgen --capi-check stops it
when they differ; tests/test_capi.py compares them with a fresh generation too). Generating them into
the install instead works under the editable redirect, but a source checkout without a build, imported
ahead of an installed pyaclnn (tests/test_stub_discovery.py), would then have no capi to import.
"""

from __future__ import annotations

import re
from pathlib import Path

from .._exceptions import InvalidArgumentError
from .declarations import Declarations, facts, read_tree

# -- what capi mirrors -------------------------------------------------------------------------------
RUNTIME_FUNCTIONS = """
aclInit aclFinalize aclFinalizeReference aclGetRecentErrMsg aclrtGetVersion aclrtGetLastError aclrtPeekAtLastError
aclrtSetDevice aclrtResetDevice aclrtResetDeviceForce aclrtGetDevice aclrtGetDeviceCount aclrtGetRunMode
aclrtSynchronizeDevice aclrtSynchronizeDeviceWithTimeout aclrtGetSocName
aclrtCreateContext aclrtDestroyContext aclrtSetCurrentContext aclrtGetCurrentContext
aclrtCreateStream aclrtCreateStreamWithConfig aclrtDestroyStream aclrtDestroyStreamForce aclrtSynchronizeStream
aclrtSynchronizeStreamWithTimeout aclrtStreamQuery aclrtStreamWaitEvent
aclrtCreateEvent aclrtCreateEventWithFlag aclrtCreateEventExWithFlag aclrtDestroyEvent aclrtRecordEvent
aclrtResetEvent aclrtQueryEvent aclrtQueryEventStatus aclrtSynchronizeEvent aclrtSynchronizeEventWithTimeout
aclrtEventElapsedTime aclrtEventGetTimestamp
aclrtMalloc aclrtMallocAlign32 aclrtMallocHost aclrtFree aclrtFreeHost aclrtMemset aclrtMemsetAsync aclrtMemcpy
aclrtMemcpyAsync aclrtMemcpy2d aclrtMemcpy2dAsync aclrtGetMemInfo
aclFloat16ToFloat aclFloatToFloat16 aclDataTypeSize
aclrtLaunchHostFunc aclrtSubscribeReport aclrtLaunchCallback aclrtProcessReport aclrtUnSubscribeReport
aclrtValueWrite aclrtValueWait aclrtQueryEventWaitStatus aclrtStreamGetId aclrtGetPrimaryCtxState
aclrtPointerGetAttributes aclrtHostRegister aclrtHostRegisterV2 aclrtHostUnregister aclrtMallocHostWithCfg
aclrtGetDeviceInfo aclrtDeviceGetUuid aclrtMemcpyBatch aclrtMemcpyBatchAsync aclrtMemcpyAsyncWithCondition
aclrtCmoAsync aclrtGetMemUsageInfo aclrtGetLogicDevIdByUserDevId aclGetCannAttributeList aclGetCannAttribute
""".split()
META_FUNCTIONS = """
aclCreateTensor aclCreateScalar aclCreateIntArray aclCreateFloatArray aclCreateBoolArray aclCreateTensorList
aclCreateScalarList aclDestroyTensor aclDestroyScalar aclDestroyIntArray aclDestroyFloatArray aclDestroyBoolArray
aclDestroyTensorList aclDestroyScalarList aclGetViewShape aclGetStorageShape aclGetViewStrides aclGetViewOffset
aclGetFormat aclGetDataType aclGetIntArraySize aclGetFloatArraySize aclGetBoolArraySize aclGetTensorListSize
aclGetScalarListSize aclInitTensor aclSetAclOpExecutorRepeatable aclDestroyAclOpExecutor
aclSetInputTensorAddr aclSetOutputTensorAddr aclSetDynamicInputTensorAddr aclSetDynamicOutputTensorAddr
aclSetTensorAddr aclSetDynamicTensorAddr AclSetInputTensorAddr AclSetOutputTensorAddr
AclSetDynamicInputTensorAddr AclSetDynamicOutputTensorAddr AclSetTensorAddr AclSetDynamicTensorAddr
aclSetRawTensorAddr aclGetRawTensorAddr aclnnInit aclnnFinalize
""".split()
# The operators whose real headers were measured (the others come from the operator catalog, capi/_operators.py).
OPERATOR_FUNCTIONS = """
aclnnAmpUpdateScaleGetWorkspaceSize aclnnAmpUpdateScale
aclnnAddRmsNormDynamicQuantGetWorkspaceSize aclnnAddRmsNormDynamicQuant
aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize aclnnAddRmsNormDynamicQuantV2
aclnnGroupedDynamicMxQuantGetWorkspaceSize aclnnGroupedDynamicMxQuant
aclnnGroupedDynamicMxQuantV2GetWorkspaceSize aclnnGroupedDynamicMxQuantV2
""".split()
# In the order of the typedef import in _functions.py.
ENUM_TYPES = """
aclDataType aclFormat aclrtMemcpyKind aclrtMemMallocPolicy aclrtMemAttr aclrtRunMode aclMemType aclLogLevel
aclrtStreamStatus aclrtEventStatus aclrtEventRecordedStatus aclrtEventWaitStatus aclrtLastErrLevel
aclrtCallbackBlockType aclrtHostRegisterType aclrtMallocAttrType aclrtMemLocationType aclrtCmoType aclrtDevAttr
aclCannAttr
""".split()
CONSTANTS = """
ACL_SUCCESS ACL_ERROR_NONE ACL_ERROR_* ACL_RT_SUCCESS ACLNN_SUCCESS ACLNN_ERR_*
ACL_EVENT_SYNC ACL_EVENT_CAPTURE_STREAM_PROGRESS ACL_EVENT_TIME_LINE ACL_EVENT_DEVICE_USE_ONLY ACL_EVENT_EXTERNAL
ACL_EVENT_IPC ACL_STREAM_FAST_LAUNCH ACL_STREAM_FAST_SYNC ACL_STREAM_PERSISTENT ACL_STREAM_HUGE
ACL_STREAM_CPU_SCHEDULE ACL_STREAM_DEVICE_USE_ONLY ACL_STREAM_WAIT_VALUE_GEQ ACL_STREAM_WAIT_VALUE_EQ
ACL_STREAM_WAIT_VALUE_AND ACL_STREAM_WAIT_VALUE_NOR ACL_HOST_REG_MAPPED ACL_HOST_REG_IOMEMORY
ACL_HOST_REG_READONLY ACL_HOST_REG_PINNED OK
""".split()
TYPEDEFS = """
aclError aclFloat16 aclrtStream aclrtEvent aclrtContext aclnnStatus aclTensor aclScalar aclIntArray aclFloatArray
aclBoolArray aclTensorList aclScalarList aclOpExecutor aclrtCallback aclrtHostFunc aclrtMallocAttrValue
aclrtMallocAttribute aclrtMallocConfig aclrtMemLocation aclrtPtrAttributes aclrtMemUsageInfo aclrtMemcpyBatchAttr
aclrtUuid
""".split()
#: The names whose real declarations tests/data/real_headers.txt lists (runtime, meta API, the seed operators).
MEASURED = tuple(RUNTIME_FUNCTIONS + META_FUNCTIONS + OPERATOR_FUNCTIONS + ENUM_TYPES + CONSTANTS + TYPEDEFS)
#: Mirrored too, though not in the measured list: the interface version of the headers (acl/acl_rt.h)
#: and a meta function newer than CANN 8.1.RC1 (aclnn/acl_meta.h).
BEYOND_MEASURED = ("ACL_MAJOR_VERSION", "ACL_MINOR_VERSION", "ACL_PATCH_VERSION", "aclDumpOpTensors")
#: Functions a real toolkit may lack besides the operators.
OPTIONAL_EXTRA = ("aclDumpOpTensors",)
#: What the static tables hold: the operators' functions are not among them, pyaclnn.capi adds every
#: operator of the one registry (the catalog the build writes, capi/_operators.py), measured ones included.
MIRRORED = tuple(n for n in MEASURED if n not in OPERATOR_FUNCTIONS) + BEYOND_MEASURED

_C_SCALARS = {"void": "None", "int": "c_int", "int32_t": "c_int32", "uint32_t": "c_uint32", "int64_t": "c_int64",
              "uint64_t": "c_uint64", "size_t": "c_size_t", "float": "c_float", "double": "c_double",
              "bool": "c_bool", "uint16_t": "c_uint16", "char": "c_char", "int8_t": "c_int8"}


class CapiTypes:
    """C type spelling -> ctypes expression, by the headers' typedefs."""

    def __init__(self, decls: Declarations):
        self.typedefs = {name: next(iter(texts)) for name, texts in decls.typedefs.items()}

    def _opaque(self, base: str) -> bool:
        text = self.typedefs.get(base, "")
        return text.startswith(("struct ", "union ")) and "{" not in text

    def expr(self, ctype: str) -> str:
        words = ctype.replace("const", " ").replace("*", " ").split()
        if len(words) != 1:
            raise InvalidArgumentError(f"unsupported C type {ctype!r}")
        base, stars = words[0], ctype.count("*")
        if base == "char" and stars == 1:
            return "c_char_p"
        if base == "void" or self._opaque(base):
            if stars == 0:
                if base == "void":
                    return "None"
                raise InvalidArgumentError(f"opaque struct by value: {ctype}")
            expr, stars = "c_void_p", stars - 1
        elif base in _C_SCALARS:
            expr = _C_SCALARS[base]
        elif base in self.typedefs:
            expr = base     # the alias of the same name in capi/_types.py
        else:
            raise InvalidArgumentError(f"unknown C type {ctype!r}")
        for _ in range(stars):
            expr = f"POINTER({expr})"
        return expr


# -- grouping of _constants.py -------------------------------------------------------------------------
def enum_group(name: str, value: int) -> str:
    if name == "OK":
        return "acl_meta"
    if name.startswith("ACLNN_"):
        return "aclnn_status"
    if name in ("ACL_DEBUG", "ACL_INFO", "ACL_WARNING", "ACL_ERROR"):
        return "aclLogLevel"
    if name in BEYOND_MEASURED:
        return "version"
    # ACL_ERROR_GE_FAILURE (500002) is an ACL code; the GE header's codes are 145/245/345/545xxx.
    if name.startswith("ACL_ERROR_GE_") and value // 1000 in (145, 245, 345, 545):
        return "ge_error"
    if name == "ACL_RT_SUCCESS" or (name.startswith("ACL_ERROR") and value // 1000 in (107, 207, 507)):
        return "rt_error"
    if name.startswith("ACL_ERROR") or name == "ACL_SUCCESS":
        return "acl_error"
    for prefix, group in [("ACL_STREAM_WAIT_VALUE_", "wait_value"), ("ACL_HOST_REG_", "host_reg_flag"),
                          ("ACL_CALLBACK_", "aclrtCallbackBlockType"),
                          ("ACL_HOST_REGISTER_", "aclrtHostRegisterType"), ("ACL_RT_MEM_ATTR_", "aclrtMallocAttrType"),
                          ("ACL_MEM_LOCATION_TYPE_", "aclrtMemLocationType"), ("ACL_RT_CMO_TYPE_", "aclrtCmoType"),
                          ("ACL_DEV_ATTR_", "aclrtDevAttr"), ("ACL_CANN_ATTR_", "aclCannAttr"),
                          ("ACL_FORMAT_", "aclFormat"), ("ACL_FRACTAL_", "aclFormat"),
                          ("ACL_MEMCPY_", "aclrtMemcpyKind"), ("ACL_MEM_MALLOC_", "aclrtMemMallocPolicy"),
                          ("ACL_MEM_TYPE_", "aclrtMemMallocPolicy"), ("ACL_MEM_ACCESS_", "aclrtMemMallocPolicy"),
                          ("ACL_MEMTYPE_", "aclMemType"), ("ACL_DDR_MEM", "aclrtMemAttr"),
                          ("ACL_HBM_MEM", "aclrtMemAttr"), ("ACL_MEM_", "aclrtMemAttr"),
                          ("ACL_EVENT_STATUS_", "aclrtEventStatus"),
                          ("ACL_EVENT_RECORDED_STATUS_", "aclrtEventRecordedStatus"),
                          ("ACL_EVENT_WAIT_STATUS_", "aclrtEventWaitStatus"),
                          ("ACL_STREAM_STATUS_", "aclrtStreamStatus"), ("ACL_EVENT_", "event_flag"),
                          ("ACL_STREAM_", "stream_flag"), ("ACL_RT_THREAD_LEVEL", "aclrtLastErrLevel")]:
        if name.startswith(prefix):
            return group
    if name in ("ACL_DEVICE", "ACL_HOST"):
        return "aclrtRunMode"
    return "aclDataType"


GROUP_TITLES = {
    "aclDataType": "aclDataType (acl/acl_base_rt.h)",
    "aclFormat": "aclFormat (acl/acl_base_rt.h)",
    "aclrtMemcpyKind": "aclrtMemcpyKind (acl/acl_rt.h)",
    "aclrtMemMallocPolicy": "aclrtMemMallocPolicy (acl/acl_rt.h): page policy 0..7 OR-able with the 0x100/0x1000/0x100000 bits",
    "aclrtMemAttr": "aclrtMemAttr (acl/acl_rt.h), first argument of aclrtGetMemInfo",
    "aclrtRunMode": "aclrtRunMode (acl/acl_rt.h)",
    "aclMemType": "aclMemType (acl/acl_base_rt.h)",
    "aclLogLevel": "aclLogLevel (acl/acl_base_rt.h)",
    "aclrtStreamStatus": "aclrtStreamStatus (acl/acl_rt.h)",
    "aclrtEventStatus": "aclrtEventStatus (acl/acl_rt.h)",
    "aclrtEventRecordedStatus": "aclrtEventRecordedStatus (acl/acl_rt.h)",
    "aclrtEventWaitStatus": "aclrtEventWaitStatus (acl/acl_rt.h)",
    "aclrtLastErrLevel": "aclrtLastErrLevel (acl/acl_rt.h)",
    "aclrtCallbackBlockType": "aclrtCallbackBlockType (acl/acl_rt.h): aclrtLaunchCallback",
    "aclrtHostRegisterType": "aclrtHostRegisterType (acl/acl_rt.h): aclrtHostRegister",
    "aclrtMallocAttrType": "aclrtMallocAttrType (acl/acl_rt.h): aclrtMallocHostWithCfg",
    "aclrtMemLocationType": "aclrtMemLocationType (acl/acl_rt.h): aclrtPointerGetAttributes, aclrtMemcpyBatch",
    "aclrtCmoType": "aclrtCmoType (acl/acl_rt.h): aclrtCmoAsync",
    "aclrtDevAttr": "aclrtDevAttr (acl/acl_rt.h): aclrtGetDeviceInfo",
    "aclCannAttr": "aclCannAttr (acl/acl_base_rt.h): aclGetCannAttribute",
    "wait_value": "conditions of aclrtValueWait (#define, acl/acl_rt.h)",
    "host_reg_flag": "aclrtHostRegisterV2 flags (#define, acl/acl_rt.h)",
    "event_flag": "event flags (#define, acl/acl_rt.h): aclrtCreateEventWithFlag / aclrtCreateEventExWithFlag",
    "stream_flag": "stream flags (#define, acl/acl_rt.h): aclrtCreateStreamWithConfig",
    "version": "interface version of the mirrored headers (#define, acl/acl_rt.h)",
    "acl_meta": "aclnn/acl_meta.h: constexpr aclnnStatus OK",
    "acl_error": "ACL error codes (static const int, acl/acl_base_rt.h)",
    "rt_error": "runtime error codes (#define, acl/error_codes/rt_error_codes.h)",
    "ge_error": "GE error codes (static const uint32_t, acl/error_codes/ge_error_codes.h)",
    "aclnn_status": "aclnn status codes (#define, aclnn/opdev/op_errno.h)",
}
GENERATED_BY = "Generated by pyaclnn/signatures/capi_mirror.py from the header tree; do not edit by hand."


def _order(group: str, members: list[tuple[int, str]]) -> list[tuple[int, str]]:
    if group == "version":   # major, minor, patch
        return sorted(members, key=lambda vn: ["MAJ", "MIN", "PAT"].index(vn[1][4:7]))
    return sorted(members, key=lambda vn: (vn[0], vn[1]))


def _selected(decls: Declarations) -> tuple[dict[str, int], dict[str, str], list[str]]:
    """(constant -> value, function -> normalised declaration, enum typedef names) of the mirrored names."""
    values: dict[str, int] = {}
    protos: dict[str, str] = {}
    enum_typedefs: list[str] = []
    for line in facts(decls, MIRRORED):
        if line.startswith("ENUM "):
            name, value = line[5:].split("=")
            if name in values:
                raise InvalidArgumentError(f"{name} has two values in the headers: {values[name]}, {value}")
            values[name] = int(value)
        elif line.startswith("TYPEDEF "):
            name, text = line[8:].split("=", 1)
            if text == "enum":
                enum_typedefs.append(name)
        else:
            name = line.split("(")[0].split()[-1]
            if name in protos:
                raise InvalidArgumentError(f"{name} is declared twice, differently:\n{protos[name]}\n{line}")
            protos[name] = line
    return values, protos, enum_typedefs


def _named_prototype(decls: Declarations, name: str) -> tuple[str, str]:
    """('ret name(type param, ...)' as the header spells the parameters, header path)."""
    fn = decls.function(name)
    params = ", ".join(re.sub(r"\s*\*\s*", "* ", p.strip()).replace("* *", "**") for p in fn.params)
    params = params or fn.params_text    # (void) stays (void)
    return f"{fn.returns} {name}({params})", fn.header


def generate(decls: Declarations) -> dict[str, str]:
    """``{"_constants.py": text, "_functions.py": text, "_enums.py": text}``."""
    values, protos, enum_typedefs = _selected(decls)
    missing = sorted(set(ENUM_TYPES) ^ set(enum_typedefs))
    if missing:
        raise InvalidArgumentError(f"enum typedefs of ENUM_TYPES and of the headers differ: {missing}")
    types = CapiTypes(decls)
    return {"_constants.py": _constants(values), "_functions.py": _functions(decls, protos, types),
            "_enums.py": _enums(decls, values, enum_typedefs)}


def _constants(values: dict[str, int]) -> str:
    groups: dict[str, list[tuple[int, str]]] = {}
    for name, value in values.items():
        groups.setdefault(enum_group(name, value), []).append((value, name))
    unknown = set(groups) - set(GROUP_TITLES)
    if unknown:
        raise InvalidArgumentError(f"unclassified enum groups: {unknown}")
    c = ['"""Every enum value, flag and status code of the mirrored CANN headers, under its C name.',
         "", GENERATED_BY, '"""', "# fmt: off", ""]
    for group in GROUP_TITLES:
        if group in groups:
            c.append(f"# {GROUP_TITLES[group]}")
            c.extend(f"{name} = {value}" for value, name in _order(group, groups[group]))
            c.append("")
    c.append("# Members of each C enum (and of each family of codes), name -> value.")
    c.append("ENUM_MEMBERS = {")
    for group in GROUP_TITLES:
        if group in groups:
            c.append(f'    "{group}": {{')
            c.extend(f'        "{n}": {n},' for _, n in _order(group, groups[group]))
            c.append("    },")
    c.append("}")
    return "\n".join(c) + "\n"


def _functions(decls: Declarations, protos: dict[str, str], types: CapiTypes) -> str:
    f = ['"""Prototype table: every function of the mirrored headers -> (restype, argtypes).',
         "",
         "The comment above each entry is the C prototype (parameter names from the ABI notes where",
         "known). Types use the typedef aliases of _types.py, so the table reads like the header.",
         GENERATED_BY,
         '"""',
         "from ctypes import POINTER, c_bool, c_char_p, c_double, c_float, c_int, c_int8, c_int32, c_int64, \\",
         "    c_size_t, c_uint16, c_uint32, c_uint64, c_void_p  # noqa: F401",
         "",
         "from ._types import *  # noqa: F401,F403",
         "from ._types import (  # noqa: F401  (the enum typedefs: c_int aliases, not the public IntEnums)",
         *("    " + ", ".join(ENUM_TYPES[i:i + 5]) + ("," if i + 5 < len(ENUM_TYPES) else ")")
           for i in range(0, len(ENUM_TYPES), 5)),
         "",
         "# fmt: off",
         "PROTOTYPES = {"]
    for name in sorted(protos, key=lambda n: (not n.startswith("acl") or n.startswith("aclnn"), n)):
        fn = decls.function(name)
        arg_types = _param_types(protos[name])
        f.append(f"    # {_named_prototype(decls, name)[0]}")
        argtuple = ", ".join(types.expr(a) for a in arg_types)
        if len(arg_types) == 1:
            argtuple += ","
        f.append(f'    "{name}": ({types.expr(fn.returns)}, ({argtuple})),')
    f.append("}")
    f.append("")
    f.append("# The normalised C declaration of each function (the form of pyaclnn.signatures.declarations.facts).")
    f.append("DECLARATIONS = {")
    f.extend(f'    "{name}": "{protos[name]}",' for name in sorted(protos))
    f.append("}")
    f.append("")
    f.append("# The C prototype with the header's parameter names, and the header that declares it")
    f.append("# (relative to the toolkit's include directory): what help() shows for each function.")
    f.append("SOURCES = {")
    for name in sorted(protos):
        proto, header = _named_prototype(decls, name)
        f.append(f'    "{name}": ("{proto}", "{header}"),')
    f.append("}")
    optional = sorted(n for n in protos if n.startswith("aclnn") and n not in ("aclnnInit", "aclnnFinalize"))
    optional += sorted(OPTIONAL_EXTRA)
    f.append("")
    f.append("# Functions a real toolkit may lack (operators; newer meta API). Binding is lazy for all of")
    f.append("# them anyway: a missing symbol raises MissingSymbolError when called.")
    f.append("OPTIONAL = frozenset({")
    f.extend(f'    "{n}",' for n in optional)
    f.append("})")
    return "\n".join(f) + "\n"


def _param_types(declaration: str) -> list[str]:
    inner = declaration[declaration.index("(") + 1:declaration.rindex(")")]
    return [] if inner == "void" else inner.split(", ")


def _enums(decls: Declarations, values: dict[str, int], enum_typedefs: list[str]) -> str:
    """One IntEnum class per C enum typedef: members and their order from the header."""
    e = ['"""The C enums of the mirrored headers as IntEnum classes: the C++ spelling',
         "``aclDataType::ACL_FLOAT16`` is ``capi.aclDataType.ACL_FLOAT16``, equal to the plain constant",
         "``capi.ACL_FLOAT16`` (which stays an int).",
         "",
         GENERATED_BY,
         '"""',
         "from enum import IntEnum",
         "",
         "# fmt: off",
         f"__all__ = {sorted(enum_typedefs)!r}"]
    for name in enum_typedefs:
        header, members = decls.enums[name]
        e += ["", "", f"class {name}(IntEnum):", f'    """C enum ``{name}`` ({header})."""']
        e += [f"    {m} = {values[m]}" for m in members]
    return "\n".join(e) + "\n"


def capi_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "capi"


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="python -m pyaclnn.signatures capi", description=__doc__.splitlines()[0])
    ap.add_argument("--headers", type=Path, help="the header tree (default: pyaclnn.get_include())")
    ap.add_argument("--out", type=Path, default=capi_dir(), help="where the three files go (default: pyaclnn/capi)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file differs")
    a = ap.parse_args(argv)
    if a.headers is None:
        from .. import get_include
        a.headers = Path(get_include())
    texts = generate(read_tree(a.headers))
    stale = [n for n, t in texts.items() if not (a.out / n).is_file() or (a.out / n).read_text() != t]
    if a.check:
        for n in stale:
            print(f"{a.out / n} is stale: python -m pyaclnn.signatures capi", file=sys.stderr)
        return 1 if stale else 0
    for n in stale:
        (a.out / n).write_text(texts[n])
    return 0
