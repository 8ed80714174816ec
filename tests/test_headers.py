"""The public headers of the built stub (pyaclnn.get_include(): native_stubs/include plus the operator
headers the build generates from native_stubs/src/ops) against the real CANN ABI.

* Every normalised declaration of the real headers (tests/data/real_headers.txt, the measured list of
  the CANN headers' declarations) must come out identically from ours, read by pyaclnn.signatures.
* The headers must compile as C11 and as C++11 the way samples use them (tests/c/header_compile.*),
  and each header must compile on its own.
"""
import os
import shutil
import subprocess

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
import pyaclnn  # noqa: E402

from pyaclnn.signatures import capi_mirror, declarations  # noqa: E402

INCLUDE = pyaclnn.get_include()
REAL_DECLS = os.path.join(TESTS, "data", "real_headers.txt")

# Lines our headers may print beyond the real list. Each entry needs a
# reason; today there are none.
ALLOWED_ADDITIONS = set()

PUBLIC_HEADERS = sorted(
    os.path.relpath(os.path.join(d, f), INCLUDE).replace(os.sep, "/")
    for d, _, files in os.walk(INCLUDE)
    for f in files
    if f.endswith(".h")
)


def _read_lines(path):
    with open(path, encoding="utf-8") as fh:
        return [line for line in fh.read().splitlines() if line]


@pytest.fixture(scope="module")
def our_tree():
    return declarations.read_tree(INCLUDE)


@pytest.fixture(scope="module")
def our_decls(our_tree):
    return set(declarations.facts(our_tree, capi_mirror.MEASURED))


def test_every_measured_name_is_declared(our_tree):
    assert declarations.missing(our_tree, capi_mirror.MEASURED + capi_mirror.BEYOND_MEASURED) == []


def test_every_real_declaration_is_matched(our_decls):
    real = _read_lines(REAL_DECLS)
    assert len(real) > 500  # the list really is there
    missing = [line for line in real if line not in our_decls]
    assert missing == [], "declarations missing or different in the stub's headers:\n" + "\n".join(missing)


def test_no_unexpected_additions(our_decls):
    extra = sorted(our_decls - set(_read_lines(REAL_DECLS)) - ALLOWED_ADDITIONS)
    assert extra == [], "declarations not in the real headers:\n" + "\n".join(extra)


def test_expected_header_tree():
    expected = {
        "acl/acl.h", "acl/acl_base.h", "acl/acl_base_rt.h", "acl/acl_rt.h",
        "acl/error_codes/rt_error_codes.h", "acl/error_codes/ge_error_codes.h",
        "aclnn/acl_meta.h", "aclnn/aclnn_base.h", "aclnn/opdev/op_errno.h",
        "aclnnop/aclnn_util.h", "aclnnop/aclnn_amp_update_scale.h",
        "aclnnop/aclnn_add_rms_norm_dynamic_quant.h", "aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h",
        "aclnnop/aclnn_grouped_dynamic_mx_quant.h", "aclnnop/aclnn_grouped_dynamic_mx_quant_v2.h",
    }
    assert expected <= set(PUBLIC_HEADERS)


def test_only_public_api_in_public_headers():
    for rel in PUBLIC_HEADERS:
        with open(os.path.join(INCLUDE, rel), encoding="utf-8") as fh:
            assert "pyaclnn_stub" not in fh.read(), rel


def _compiler(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip("no %s on PATH" % name)
    return path


def _syntax_check(compiler, std, lang, source=None, code=None):
    cmd = [compiler, "-std=" + std, "-Wall", "-Werror", "-fsyntax-only", "-I", INCLUDE, "-x", lang]
    cmd.append(source if source is not None else "-")
    res = subprocess.run(cmd, input=code, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_compiles_as_c11():
    _syntax_check(_compiler("cc"), "c11", "c", source=os.path.join(TESTS, "c", "header_compile.c"))


def test_compiles_as_cxx11():
    _syntax_check(_compiler("c++"), "c++11", "c++", source=os.path.join(TESTS, "c", "header_compile.cpp"))


@pytest.mark.parametrize("header", PUBLIC_HEADERS)
def test_each_header_is_self_contained(header):
    code = '#include "%s"\n' % header
    _syntax_check(_compiler("cc"), "c11", "c", code=code)
    _syntax_check(_compiler("c++"), "c++11", "c++", code=code)
