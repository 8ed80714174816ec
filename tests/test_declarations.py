"""pyaclnn.signatures.declarations: the whole C API of a header tree (prototypes, constants, typedefs, enums).

The header texts are written for these tests in the styles the vendor headers use; the expected lines
are the normalised form of tests/data/real_headers.txt, derived by hand from the C declarations.
The stub's own tree against the vendor's list is tests/test_headers.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pyaclnn.signatures import cexpr
from pyaclnn.signatures.cheader import parse_param
from pyaclnn.signatures.declarations import facts, missing, read_tree

HEADER = r'''
#pragma once
#include <stdint.h>
#define MY_API __attribute__((visibility("default")))
#define MY_EMPTY
#define MY_DEPRECATED(m) __attribute__((deprecated(m)))
#ifdef __cplusplus
extern "C" {
#endif
typedef void* aclrtStream;            /* pointer typedef */
typedef int aclError;
typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;
enum { ACL_SUCCESS = 0, ACL_ERROR_INVALID_PARAM = 100000 };
static const int ACL_ERROR_UNINITIALIZE = 100001;
#define ACL_ERROR_RT_PARAM_INVALID (107000) // comment
#define ACLNN_ERR_PARAM_NULLPTR 161001U
typedef enum aclrtMemcpyKind { ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE = ACL_MEMCPY_DEVICE_TO_HOST + 1,
  ACL_MEMCPY_DEFAULT } aclrtMemcpyKind;
typedef enum { ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
  ACL_MEM_NEXT } aclrtMemMallocPolicy;
MY_API aclError aclrtSetDevice(const int32_t deviceId);
MY_EMPTY aclError aclrtMemcpy(void *dst, size_t destMax, const void* src,
                              size_t count, aclrtMemcpyKind kind);
MY_API const char *aclGetRecentErrMsg();
MY_API aclTensor *aclCreateTensorList(aclTensor const * const *value, uint64_t size);
int32_t aclSetInputTensorAddr(struct aclOpExecutor *executor, const size_t index,
                              aclTensor *tensor, void *addr);
typedef void (*aclrtCallback)(void *userData);
static inline int helper(int x) { return x + 1; }
#ifdef __cplusplus
}
namespace hidden { int notC(int); }
#endif
'''

EXPECTED = [
    'ENUM ACLNN_ERR_PARAM_NULLPTR=161001',
    'ENUM ACL_ERROR_INVALID_PARAM=100000',
    'ENUM ACL_ERROR_RT_PARAM_INVALID=107000',
    'ENUM ACL_ERROR_UNINITIALIZE=100001',
    'ENUM ACL_MEMCPY_DEFAULT=4',
    'ENUM ACL_MEMCPY_DEVICE_TO_DEVICE=3',
    'ENUM ACL_MEMCPY_DEVICE_TO_HOST=2',
    'ENUM ACL_MEMCPY_HOST_TO_DEVICE=1',
    'ENUM ACL_MEMCPY_HOST_TO_HOST=0',
    'ENUM ACL_MEM_MALLOC_HUGE_FIRST=0',
    'ENUM ACL_MEM_NEXT=4097',
    'ENUM ACL_MEM_TYPE_HIGH_BAND_WIDTH=4096',
    'ENUM ACL_SUCCESS=0',
    'TYPEDEF aclError=int',
    'TYPEDEF aclOpExecutor=struct aclOpExecutor',
    'TYPEDEF aclTensor=struct aclTensor',
    'TYPEDEF aclrtCallback=void(*)(void*)',
    'TYPEDEF aclrtMemMallocPolicy=enum',
    'TYPEDEF aclrtMemcpyKind=enum',
    'TYPEDEF aclrtStream=void*',
    'aclError aclrtMemcpy(void*, size_t, const void*, size_t, aclrtMemcpyKind);',
    'aclError aclrtSetDevice(int32_t);',
    'aclTensor* aclCreateTensorList(const aclTensor* const*, uint64_t);',
    'const char* aclGetRecentErrMsg(void);',
    'int32_t aclSetInputTensorAddr(aclOpExecutor*, size_t, aclTensor*, void*);',
]


def tree(tmp_path: Path, text: str, name: str = "acl/acl.h") -> Path:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    return tmp_path


def test_every_kind_of_fact_in_normalised_form(tmp_path):
    assert facts(read_tree(tree(tmp_path, HEADER))) == EXPECTED


def test_enum_members_in_order_and_the_header_that_defines_them(tmp_path):
    decls = read_tree(tree(tmp_path, HEADER))
    assert decls.enums["aclrtMemcpyKind"] == ("acl/acl.h", [
        "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST",
        "ACL_MEMCPY_DEVICE_TO_DEVICE", "ACL_MEMCPY_DEFAULT"])
    fn = decls.function("aclrtMemcpy")
    assert fn.header == "acl/acl.h" and fn.returns == "aclError"
    assert fn.params == ("void *dst", "size_t destMax", "const void* src", "size_t count", "aclrtMemcpyKind kind")


def test_selection_by_name_and_glob_and_enum_type(tmp_path):
    decls = read_tree(tree(tmp_path, HEADER))
    got = facts(decls, ["aclrtSetDevice", "ACL_ERROR_*", "aclrtMemMallocPolicy"])
    assert got == ['ENUM ACL_ERROR_INVALID_PARAM=100000', 'ENUM ACL_ERROR_RT_PARAM_INVALID=107000',
                   'ENUM ACL_ERROR_UNINITIALIZE=100001', 'ENUM ACL_MEM_MALLOC_HUGE_FIRST=0',
                   'ENUM ACL_MEM_NEXT=4097', 'ENUM ACL_MEM_TYPE_HIGH_BAND_WIDTH=4096',
                   'TYPEDEF aclrtMemMallocPolicy=enum', 'aclError aclrtSetDevice(int32_t);']
    assert missing(decls, ["aclrtSetDevice", "aclrtNope", "ACL_NOPE_*"]) == ["ACL_NOPE_*", "aclrtNope"]


def test_deprecated_members_structures_and_defines_across_headers(tmp_path):
    tree(tmp_path, "#define ACL_DEPRECATED_MESSAGE(m)\n#define BASE 0x10\n", "a/macros.h")
    tree(tmp_path, """
        typedef enum { X_A = BASE, X_B ACL_DEPRECATED_MESSAGE("use X_C") = 7, X_C } xKind;
        #define AFTER (X_C << 2)
        typedef struct { char name[32]; unsigned long long size; xKind *kinds; } xInfo;
        typedef union { uint16_t id; uint8_t rsv[8]; } xValue;
        constexpr int32_t OK = 0;
        ACL_DEPRECATED_MESSAGE("gone") int xOld(const char* const* names, int n);
        """, "b/x.h")
    decls = read_tree(tmp_path)
    assert decls.enums["xKind"] == ("b/x.h", ["X_A", "X_B", "X_C"])
    assert [ln for ln in facts(decls) if not ln.startswith("ENUM BASE")] == [
        "ENUM AFTER=32", "ENUM OK=0", "ENUM X_A=16", "ENUM X_B=7", "ENUM X_C=8",
        "TYPEDEF xInfo=struct{char[32] name; unsigned long long size; xKind* kinds}",
        "TYPEDEF xKind=enum", "TYPEDEF xValue=union{uint16_t id; uint8_t[8] rsv}",
        "int xOld(const char* const*, int);"]


@pytest.mark.parametrize("decl,ctype", [
    ("aclTensor const * const *value", "const aclTensor* const*"),
    ("const aclScalar *const *value", "const aclScalar* const*"),
    ("aclTensor * const t", "aclTensor*"),         # top-level const is not ABI
    ("const int32_t deviceId", "int32_t"),
    ("void **ptr", "void**"),
    ("struct aclOpExecutor *executor", "aclOpExecutor*"),
])
def test_parameter_spelling(decl, ctype):
    assert parse_param(decl).ctype == ctype


@pytest.mark.parametrize("text,value", [
    ("0x1000U", 4096), ("(107000)", 107000), ("1 << 3 | 1", 9), ("(uint32_t)5", 5), ("010", 8),
    ("A + 1", 6), ("~0", -1), ("7 / 2", 3), ("B", None), ('"str"', None), ("1.5", None), ("", None),
])
def test_constant_expressions(text, value):
    assert cexpr.evaluate(cexpr.tokens(text), {"A": 5}) == value
