"""Regenerate ``_constants.py``, ``_functions.py`` and ``_enums.py`` from a normalised declaration list.

The input is the format printed by ``extract_decls.py`` (one fact per line: ``ENUM NAME=value``,
``TYPEDEF name=...`` and normalised prototypes such as ``aclError aclrtFree(void*);``).  Parameter
names for the comments are read from a header tree (default: the checkout's native_stubs/include).

    python pyaclnn/capi/_codegen.py tests/data/real_headers.txt [--headers native_stubs/include]

(run as a file: it needs nothing from the package, so it also repairs broken generated files).

Never imported at run time; the generated files are checked in.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Functions that may be absent from a real toolkit: newer than CANN 8.1.RC1, or operators.
OPTIONAL_EXTRA = {
    # aclnnStatus aclDumpOpTensors(const char* opType, const char* opName, aclTensor** tensors,
    #                              size_t inputTensorNum, size_t outputTensorNum, aclrtStream stream)
    "aclDumpOpTensors": "aclnnStatus aclDumpOpTensors(const char*, const char*, aclTensor**, size_t, size_t, aclrtStream);",
}
# Interface version of the headers we mirror (#define in acl/acl_rt.h, not in the extractor's list).
EXTRA_CONSTANTS = {"ACL_MAJOR_VERSION": 1, "ACL_MINOR_VERSION": 17, "ACL_PATCH_VERSION": 0}

ENUM_TYPES = ["aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy", "aclrtMemAttr",
              "aclrtRunMode", "aclMemType", "aclLogLevel", "aclrtStreamStatus", "aclrtEventStatus",
              "aclrtEventRecordedStatus", "aclrtEventWaitStatus", "aclrtLastErrLevel", "aclrtCallbackBlockType",
              "aclrtHostRegisterType", "aclrtMallocAttrType", "aclrtMemLocationType", "aclrtCmoType",
              "aclrtDevAttr", "aclCannAttr"]
# Structures, unions and function-pointer types of the headers: ctypes classes of _types.py, same names.
RECORD_TYPES = ["aclrtMallocAttrValue", "aclrtMallocAttribute", "aclrtMallocConfig", "aclrtMemLocation",
                "aclrtPtrAttributes", "aclrtMemUsageInfo", "aclrtMemcpyBatchAttr", "aclrtUuid"]
CALLBACK_TYPES = ["aclrtCallback", "aclrtHostFunc"]
HANDLE_TYPES = ["aclrtStream", "aclrtEvent", "aclrtContext"]           # typedef void*
OPAQUE_STRUCTS = ["aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray",
                  "aclTensorList", "aclScalarList", "aclOpExecutor", "aclDataBuffer"]
SCALARS = {"void": "None", "int": "c_int", "int32_t": "c_int32", "uint32_t": "c_uint32",
           "int64_t": "c_int64", "uint64_t": "c_uint64", "size_t": "c_size_t", "float": "c_float",
           "double": "c_double", "bool": "c_bool", "uint16_t": "c_uint16", "char": "c_char", "int8_t": "c_int8",
           "aclError": "aclError", "aclnnStatus": "aclnnStatus", "aclFloat16": "aclFloat16"}
SCALARS.update({t: t for t in ENUM_TYPES})
SCALARS.update({t: t for t in HANDLE_TYPES})
SCALARS.update({t: t for t in RECORD_TYPES + CALLBACK_TYPES})


def ctypes_expr(ctype: str) -> str:
    """C type of a normalised declaration -> the ctypes expression used in _functions.py."""
    t = ctype.replace("const", " ").split()
    base, stars = " ".join(w for w in t if w != "*"), ctype.count("*")
    base = base.replace("*", "").strip()
    if base == "char" and stars == 1:
        return "c_char_p"
    if base == "void":
        if stars == 0:
            return "None"
        expr, stars = "c_void_p", stars - 1
    elif base in OPAQUE_STRUCTS:
        if stars == 0:
            raise ValueError(f"opaque struct by value: {ctype}")
        expr, stars = "c_void_p", stars - 1
    elif base in SCALARS:
        expr = SCALARS[base]
    else:
        raise ValueError(f"unknown C type {ctype!r}")
    for _ in range(stars):
        expr = f"POINTER({expr})"
    return expr


PROTO = re.compile(r"^(?P<ret>.+?)\s*\b(?P<name>\w+)\((?P<args>.*)\);$")


def parse_proto(line: str):
    m = PROTO.match(line.strip())
    if not m:
        raise ValueError(line)
    args = [a.strip() for a in m["args"].split(",")] if m["args"].strip() not in ("", "void") else []
    return m["name"], m["ret"].strip(), args


def _header_texts(header_dir: Path | None) -> dict[str, str]:
    """Header path relative to the include root -> its text without comments, on one line."""
    if header_dir is None or not header_dir.is_dir():
        return {}
    out = {}
    for h in sorted(header_dir.rglob("*.h")):
        src = re.sub(r"/\*.*?\*/|//[^\n]*", " ", h.read_text(errors="replace"), flags=re.S)
        out[h.relative_to(header_dir).as_posix()] = " ".join(src.split())
    return out


def param_names(headers: dict[str, str], protos: dict) -> dict:
    """name -> ('ret name(type param, ...)' with the parameter spelling of the headers, header path)."""
    out = {}
    for name, (_, ret, _) in protos.items():
        for path, text in headers.items():
            m = re.search(rf"\b{name}\s*\(([^()]*)\)\s*;", text)
            if m:
                params = ", ".join(re.sub(r"\s*\*\s*", "* ", p.strip()).replace("* *", "**")
                                   for p in m.group(1).split(","))
                out[name] = (f"{ret} {name}({params})", path)
                break
    return out


ENUM_DEF = re.compile(r"typedef enum\s*(\w*)\s*\{([^{}]*)\}\s*(\w+)\s*;")
MEMBER_ATTRIBUTE = re.compile(r"\bACL_DEPRECATED_MESSAGE\s*\([^()]*\)")


def header_enums(headers: dict[str, str]) -> dict[str, tuple[str, list[str]]]:
    """Every ``typedef enum {...} name;`` of the headers: name -> (header path, member names in order)."""
    out = {}
    for path, text in headers.items():
        for m in ENUM_DEF.finditer(text):
            body = MEMBER_ATTRIBUTE.sub(" ", m.group(2))
            members = [item.split("=")[0].strip() for item in body.split(",") if item.strip()]
            out[m.group(3)] = (path, members)
    return out


def enum_group(name: str, value: int) -> str:
    if name == "OK":
        return "acl_meta"
    if name.startswith("ACLNN_"):
        return "aclnn_status"
    if name in ("ACL_DEBUG", "ACL_INFO", "ACL_WARNING", "ACL_ERROR"):
        return "aclLogLevel"
    if name in EXTRA_CONSTANTS:
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


def _order(group, members):
    if group == "version":   # major, minor, patch
        return sorted(members, key=lambda vn: ["MAJ", "MIN", "PAT"].index(vn[1][4:7]))
    return sorted(members, key=lambda vn: (vn[0], vn[1]))


def generate(decl_file: Path, header_dir: Path | None) -> tuple[str, str, str]:
    enums, protos, enum_typedefs = {}, {}, []
    for line in decl_file.read_text().splitlines():
        line = line.strip()
        if line.startswith("ENUM "):
            name, value = line[5:].split("=")
            enums[name] = int(value, 0)
        elif line.startswith("TYPEDEF "):
            name, target = line[8:].split("=", 1)
            if target == "enum":
                enum_typedefs.append(name)
        elif line and not line.startswith("#"):
            name, ret, args = parse_proto(line)
            protos[name] = (line, ret, args)
    for name, line in OPTIONAL_EXTRA.items():
        protos.setdefault(name, (line,) + parse_proto(line)[1:])
    enums.update(EXTRA_CONSTANTS)
    headers = _header_texts(header_dir)
    names = param_names(headers, protos)
    if headers and set(protos) - set(names):
        raise SystemExit(f"declared in no header of {header_dir}: {sorted(set(protos) - set(names))}")
    if sorted(enum_typedefs) != sorted(ENUM_TYPES):
        raise SystemExit(f"enum typedefs {sorted(enum_typedefs)} differ from ENUM_TYPES {sorted(ENUM_TYPES)}")

    # ---- constants
    groups: dict[str, list] = {}
    for name, value in enums.items():
        groups.setdefault(enum_group(name, value), []).append((value, name))
    c = ['"""Every enum value, flag and status code of the mirrored CANN headers, under its C name.',
         "",
         f"Generated by pyaclnn/capi/_codegen.py from {decl_file.name}; do not edit by hand.",
         '"""', "# fmt: off", ""]
    for group in GROUP_TITLES:
        if group not in groups:
            continue
        c.append(f"# {GROUP_TITLES[group]}")
        for value, name in _order(group, groups[group]):
            c.append(f"{name} = {value}")
        c.append("")
    unknown = set(groups) - set(GROUP_TITLES)
    if unknown:
        raise SystemExit(f"unclassified enum groups: {unknown}")
    c.append("# Members of each C enum (and of each family of codes), name -> value.")
    c.append("ENUM_MEMBERS = {")
    for group in GROUP_TITLES:
        if group in groups:
            c.append(f'    "{group}": {{')
            c.extend(f'        "{n}": {n},' for _, n in _order(group, groups[group]))
            c.append("    },")
    c.append("}")
    constants = "\n".join(c) + "\n"

    # ---- functions
    f = ['"""Prototype table: every function of the mirrored headers -> (restype, argtypes).',
         "",
         "The comment above each entry is the C prototype (parameter names from the ABI notes where",
         "known). Types use the typedef aliases of _types.py, so the table reads like the header.",
         f"Generated by pyaclnn/capi/_codegen.py from {decl_file.name}; do not edit by hand.",
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
        line, ret, args = protos[name]
        f.append(f"    # {names[name][0] if name in names else line.rstrip(';')}")
        argtuple = ", ".join(ctypes_expr(a) for a in args)
        if len(args) == 1:
            argtuple += ","
        f.append(f'    "{name}": ({ctypes_expr(ret)}, ({argtuple})),')
    f.append("}")
    f.append("")
    f.append("# The normalised C declaration of each function (as extract_decls.py prints it).")
    f.append("DECLARATIONS = {")
    for name in sorted(protos):
        f.append(f'    "{name}": "{protos[name][0]}",')
    f.append("}")
    f.append("")
    f.append("# The C prototype with the header's parameter names, and the header that declares it")
    f.append("# (relative to the toolkit's include directory): what help() shows for each function.")
    f.append("SOURCES = {")
    for name in sorted(protos):
        proto, header = names.get(name, (protos[name][0].rstrip(";"), None))
        f.append(f'    "{name}": ("{proto}", ' + (f'"{header}"' if header else "None") + "),")
    f.append("}")
    optional = sorted(n for n in protos if n.startswith("aclnn") and n not in ("aclnnInit", "aclnnFinalize"))
    optional += sorted(OPTIONAL_EXTRA)
    f.append("")
    f.append("# Functions a real toolkit may lack (operators; newer meta API). Binding is lazy for all of")
    f.append("# them anyway: a missing symbol raises MissingSymbolError when called.")
    f.append("OPTIONAL = frozenset({")
    for n in optional:
        f.append(f'    "{n}",')
    f.append("})")
    functions = "\n".join(f) + "\n"
    return constants, functions, generate_enums(decl_file.name, enums, header_enums(headers), enum_typedefs)


def generate_enums(source: str, values: dict, in_headers: dict, enum_typedefs: list) -> str:
    """One IntEnum class per C enum typedef: members and their order from the header, values from ENUM lines."""
    e = ['"""The C enums of the mirrored headers as IntEnum classes: the C++ spelling',
         "``aclDataType::ACL_FLOAT16`` is ``capi.aclDataType.ACL_FLOAT16``, equal to the plain constant",
         "``capi.ACL_FLOAT16`` (which stays an int).",
         "",
         f"Generated by pyaclnn/capi/_codegen.py from {source} and the header tree; do not edit by hand.",
         '"""',
         "from enum import IntEnum",
         "",
         "# fmt: off",
         f"__all__ = {sorted(enum_typedefs)!r}"]
    if not in_headers:
        raise SystemExit("the enum classes need the header tree (--headers)")
    for name in enum_typedefs:
        if name not in in_headers:
            raise SystemExit(f"typedef enum {name} not found in the headers")
        header, members = in_headers[name]
        unknown = [m for m in members if m not in values]
        if unknown:
            raise SystemExit(f"{name} members without a value in {source}: {unknown}")
        e += ["", "", f"class {name}(IntEnum):", f'    """C enum ``{name}`` ({header})."""']
        e += [f"    {m} = {values[m]}" for m in members]
    return "\n".join(e) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("decls", type=Path, help="normalised declaration list (extract_decls.py output)")
    ap.add_argument("--headers", type=Path, default=HERE.parent.parent / "native_stubs" / "include",
                    help="header tree to take parameter names from")
    ap.add_argument("--out", type=Path, default=HERE)
    a = ap.parse_args(argv)
    constants, functions, enums = generate(a.decls, a.headers)
    (a.out / "_constants.py").write_text(constants)
    (a.out / "_functions.py").write_text(functions)
    (a.out / "_enums.py").write_text(enums)
    return 0


if __name__ == "__main__":
    sys.exit(main())
