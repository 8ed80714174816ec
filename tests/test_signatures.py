"""pyaclnn.signatures: parsing aclnnop/*.h prototypes into parameter kinds, roles and optionality.

Every header text here was written for these tests, in each style the vendor headers use
(hand-written with ACLNN_API, generated with __attribute__, older ACL_FUNC_VISIBILITY ones) and the
layouts of a toolkit (several operators per header, level2/ copies, macros). The expected values
come from the C declarations themselves, and for our five operators from ../shared/spec/abi.md §3.3.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pyaclnn import signatures
from pyaclnn.signatures import Kind, OpSignature, Param, Role, parse_dir, parse_header_text
from pyaclnn.signatures import catalog
from pyaclnn.signatures.cheader import parse_param
from pyaclnn.signatures.cli import main, render

import pyaclnn

REPO = Path(__file__).resolve().parent.parent
# The built stub's operator headers (hand-written and generated from native_stubs/src/ops).
OUR_HEADERS = Path(pyaclnn.get_include()) / "aclnnop"
DATA = Path(__file__).resolve().parent / "data" / "signature_headers" / "aclnnop"

T, TL = Kind.TENSOR, Kind.TENSOR_LIST
IN, OUT, INOUT = Role.IN, Role.OUT, Role.INOUT
TRAILING = [("workspaceSize", "uint64_t*", Kind.WORKSPACE_SIZE, OUT, False),
            ("executor", "aclOpExecutor**", Kind.EXECUTOR, OUT, False)]


def rows(sig: OpSignature) -> list[tuple]:
    return [(p.name, p.ctype, p.kind, p.role, p.optional) for p in sig.params]


def roles(sig: OpSignature) -> dict[str, Role]:
    return {p.name: p.role for p in sig.user_params}


def one(text: str) -> OpSignature:
    sigs = parse_header_text(text, "t.h")
    assert len(sigs) == 1, [s.name for s in sigs]
    return sigs[0]


def proto(params: str, op: str = "aclnnTest", launch: bool = True) -> str:
    """A minimal hand-written style header declaring ``op`` with ``params`` before the trailing pair."""
    text = (f"ACLNN_API aclnnStatus {op}GetWorkspaceSize({params}, uint64_t* workspaceSize, "
            f"aclOpExecutor** executor);\n")
    if launch:
        text += (f"ACLNN_API aclnnStatus {op}(void* workspace, uint64_t workspaceSize, "
                 f"aclOpExecutor* executor, aclrtStream stream);\n")
    return text


# ------------------------------------------------------------------------------------------------
# Our own operators (exact prototypes in ../shared/spec/abi.md §3.3)
# ------------------------------------------------------------------------------------------------
OUR_OPS = {
    "aclnnAmpUpdateScale": [
        ("currentScale", "const aclTensor*", T, IN, False),
        ("growthTracker", "const aclTensor*", T, IN, False),
        ("foundInf", "const aclTensor*", T, IN, False),
        ("growthFactor", "double", Kind.DOUBLE, IN, False),
        ("backoffFactor", "double", Kind.DOUBLE, IN, False),
        ("growthInterval", "int64_t", Kind.INT, IN, False),
        ("updatedScaleOut", "const aclTensor*", T, OUT, False),
        ("updatedGrowthTrackerOut", "const aclTensor*", T, OUT, False),
    ] + TRAILING,
    "aclnnAddRmsNormDynamicQuant": [
        ("x1", "const aclTensor*", T, IN, False),
        ("x2", "const aclTensor*", T, IN, False),
        ("gamma", "const aclTensor*", T, IN, False),
        ("smoothScale1Optional", "const aclTensor*", T, IN, True),
        ("smoothScale2Optional", "const aclTensor*", T, IN, True),
        ("epsilon", "double", Kind.DOUBLE, IN, False),
        ("y1Out", "aclTensor*", T, OUT, False),
        ("y2Out", "aclTensor*", T, OUT, False),
        ("xOut", "aclTensor*", T, OUT, False),
        ("scale1Out", "aclTensor*", T, OUT, False),
        ("scale2Out", "aclTensor*", T, OUT, False),
    ] + TRAILING,
    "aclnnAddRmsNormDynamicQuantV2": [
        ("x1", "const aclTensor*", T, IN, False),
        ("x2", "const aclTensor*", T, IN, False),
        ("gamma", "const aclTensor*", T, IN, False),
        ("smoothScale1Optional", "const aclTensor*", T, IN, True),
        ("smoothScale2Optional", "const aclTensor*", T, IN, True),
        ("betaOptional", "const aclTensor*", T, IN, True),
        ("epsilon", "double", Kind.DOUBLE, IN, False),
        ("outputMask", "const aclBoolArray*", Kind.BOOL_ARRAY, IN, True),  # "may be NULL" (spec §3.3)
        ("y1Out", "aclTensor*", T, OUT, False),
        ("y2Out", "aclTensor*", T, OUT, False),
        ("xOut", "aclTensor*", T, OUT, False),
        ("scale1Out", "aclTensor*", T, OUT, False),
        ("scale2Out", "aclTensor*", T, OUT, False),
    ] + TRAILING,
    "aclnnGroupedDynamicMxQuant": [
        ("x", "const aclTensor*", T, IN, False),
        ("groupIndex", "const aclTensor*", T, IN, False),
        ("roundMode", "const char*", Kind.STRING, IN, False),
        ("dstType", "int64_t", Kind.INT, IN, False),
        ("blocksize", "int64_t", Kind.INT, IN, False),
        ("y", "const aclTensor*", T, OUT, False),
        ("mxscale", "const aclTensor*", T, OUT, False),
    ] + TRAILING,
    "aclnnGroupedDynamicMxQuantV2": [
        ("x", "const aclTensor*", T, IN, False),
        ("groupIndex", "const aclTensor*", T, IN, False),
        ("roundMode", "const char*", Kind.STRING, IN, False),
        ("dstType", "int64_t", Kind.INT, IN, False),
        ("blocksize", "int64_t", Kind.INT, IN, False),
        ("scaleAlg", "int64_t", Kind.INT, IN, False),
        ("dstTypeMax", "double", Kind.DOUBLE, IN, False),
        ("y", "const aclTensor*", T, OUT, False),
        ("mxscale", "const aclTensor*", T, OUT, False),
    ] + TRAILING,
}


@pytest.fixture(scope="module")
def our_ops() -> dict[str, OpSignature]:
    return parse_dir(OUR_HEADERS)


def _exported_operators() -> set[str]:
    """Every aclnnXxx the stub's libopapi exports with its phase-1 function (from its dynamic symbols)."""
    import subprocess
    lib = os.path.join(pyaclnn.get_library_dir(), "libopapi.so")
    syms = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in syms.splitlines() if line.split()}
    return {n[:-len("GetWorkspaceSize")] for n in names if n.startswith("aclnn") and n.endswith("GetWorkspaceSize")}


def test_our_headers_declare_exactly_our_operators(our_ops):
    # Every operator libopapi exports has its header, and every header declares an exported operator.
    assert sorted(our_ops) == sorted(_exported_operators())
    assert set(OUR_OPS) <= set(our_ops)


def test_every_operator_signature_is_fully_classified(our_ops):
    domains = {"aclnn_math", "aclnn_ops_infer", "aclnn_ops_train", "aclnn_rand"}
    bad = {n: (s.has_launch, s.fully_classified, s.domain) for n, s in our_ops.items()
           if not (s.has_launch and s.fully_classified and s.domain in domains)}
    assert bad == {}


@pytest.mark.parametrize("name", sorted(OUR_OPS))
def test_our_operator_kinds_roles_and_optionality(our_ops, name):
    sig = our_ops[name]
    assert rows(sig) == OUR_OPS[name]
    assert sig.has_launch and sig.fully_classified
    assert sig.header.startswith("aclnn_") and sig.header.endswith(".h")


def test_our_prototypes_match_the_real_vendor_declarations(our_ops):
    # tests/data/real_headers.txt: the normalised declarations of the real CANN headers we were given
    # (runtime, meta API and the seed operators); each operator they declare must come out identically.
    real = (Path(__file__).resolve().parent / "data" / "real_headers.txt").read_text().splitlines()
    declared = {ln.split()[1].split("(")[0] for ln in real if ln.startswith("aclnnStatus aclnn")}
    checked = 0
    for name, sig in our_ops.items():
        if sig.workspace_function not in declared:
            continue
        decl = f"aclnnStatus {sig.workspace_function}({', '.join(p.ctype for p in sig.params)});"
        assert decl in real, decl
        assert f"aclnnStatus {name}(void*, uint64_t, aclOpExecutor*, aclrtStream);" in real
        checked += 1
    assert checked >= len(OUR_OPS)


def test_ctypes_argtypes_agree_with_the_capi_mirror(our_ops):
    import ctypes

    from pyaclnn.capi import PROTOTYPES
    for name, sig in our_ops.items():
        assert PROTOTYPES[sig.workspace_function] == (ctypes.c_int32, signatures.workspace_argtypes(sig))
        assert PROTOTYPES[name] == (ctypes.c_int32, signatures.LAUNCH_ARGTYPES)


def test_ctypes_types_of_every_kind():
    import ctypes
    sig = one(proto("const aclTensor* self, int8_t a, uint32_t b, int c, unsigned long long d, size_t e, "
                    "float f, bool g, aclDataType h, const char* i, void* j, aclrtStream k, aclTensor* out"))
    assert signatures.workspace_argtypes(sig) == (
        ctypes.c_void_p, ctypes.c_int8, ctypes.c_uint32, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_size_t,
        ctypes.c_float, ctypes.c_bool, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p))
    with pytest.raises(ValueError):
        signatures.ctypes_type(Param("x", "Mystery", Kind.UNKNOWN))


def test_our_operator_domains(our_ops):
    # The library that carries each symbol in split installs (spec §3.3 / §4.1).
    assert our_ops["aclnnAmpUpdateScale"].domain == "aclnn_math"
    for name in set(OUR_OPS) - {"aclnnAmpUpdateScale"}:
        assert our_ops[name].domain == "aclnn_ops_infer", name


def test_shipped_builtin_registry_equals_a_fresh_parse_of_our_headers(our_ops):
    # The catalog the build wrote (its generator read the headers with this package's parser) says
    # what a fresh parse of the installed headers says.
    assert dict(signatures.builtin()) == our_ops


def test_builtin_registry_source_is_recorded():
    from pyaclnn import _catalog
    assert _catalog.signature_doc()["format"] == 1
    assert _catalog.signature_doc()["source"] == "native_stubs/src/ops"


# ------------------------------------------------------------------------------------------------
# Header styles
# ------------------------------------------------------------------------------------------------
def test_hand_written_style_with_doc_comments():
    sig = parse_dir(DATA)["aclnnScaleShift"]
    assert rows(sig) == [
        ("self", "const aclTensor*", T, IN, False),
        ("scaleOptional", "const aclTensor*", T, IN, True),
        ("shift", "const aclTensor*", T, IN, True),     # doc: 支持传空指针 (may pass a null pointer)
        ("mask", "const aclTensor*", T, IN, False),     # doc: 不支持空指针 (null not supported)
        ("other", "const aclTensor*", T, IN, False),    # doc: 支持空Tensor (empty tensors), not NULL
        ("alpha", "double", Kind.DOUBLE, IN, False),
        ("out", "aclTensor*", T, OUT, False),           # doc tags it [in]; the prototype wins
    ] + TRAILING
    assert sig.domain == "aclnn_test_infer"
    assert sig.has_launch  # declared with `const aclrtStream stream`
    assert sig.header == "aclnn_scale_shift.h" and sig.notes == ()


def test_generated_style():
    sig = parse_dir(DATA)["aclnnFusedBlend"]
    assert rows(sig) == [
        ("x", "const aclTensor*", T, IN, False),
        ("weightsOptional", "const aclTensor*", T, IN, True),
        ("blocks", "const aclTensorList*", TL, IN, False),
        ("accumRef", "const aclTensor*", T, INOUT, False),
        ("ratio", "double", Kind.DOUBLE, IN, False),
        ("layout", "char*", Kind.STRING, IN, False),     # "layout : optional" = has a default, not NULL
        ("yOut", "const aclTensor*", T, OUT, False),
        ("countOutOptional", "const aclTensor*", T, OUT, True),
    ] + TRAILING
    assert sig.has_launch and sig.notes == ()


def test_directory_layout_level2_copies_and_macros():
    ops = parse_dir(DATA)
    assert sorted(ops) == ["aclnnFusedBlend", "aclnnInplaceScaleShift", "aclnnOnlyInLevel2", "aclnnScaleShift"]
    assert ops["aclnnScaleShift"].header == "aclnn_scale_shift.h"      # shallowest copy wins
    assert ops["aclnnOnlyInLevel2"].header == "level2/aclnn_only_in_level2.h"
    # aclnn_util.h's ACLNN_DECLARE_PHASE1 macro is not a prototype; scan_dir keeps duplicates.
    assert [s.header for s in signatures.scan_dir(DATA) if s.name == "aclnnScaleShift"] == [
        "aclnn_scale_shift.h", "level2/aclnn_scale_shift.h"]
    assert ops["aclnnInplaceScaleShift"].domain == "aclnn_test_infer"  # first @domain of the file


def test_export_macros_and_extern_c_variants():
    text = """
    #ifdef __cplusplus
    extern "C" {
    #endif
    ACL_FUNC_VISIBILITY aclnnStatus aclnnOneGetWorkspaceSize(const aclTensor *self, aclTensor *out,
        uint64_t *workspaceSize, aclOpExecutor **executor);
    ACL_FUNC_VISIBILITY aclnnStatus aclnnOne(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
    __attribute__((visibility("default"))) __attribute__((deprecated("use V2")))
    aclnnStatus aclnnTwoGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
    ACLNN_API ACL_DEPRECATED_MESSAGE("use aclnnFour") aclnnStatus aclnnThreeGetWorkspaceSize(const aclTensor* self,
        aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) noexcept;
    extern aclnnStatus aclnnFourGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
    [[nodiscard]] aclnnStatus aclnnFiveGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
    #ifdef __cplusplus
    }
    #endif
    """
    sigs = parse_header_text(text, "t.h")
    assert [s.name for s in sigs] == ["aclnnOne", "aclnnTwo", "aclnnThree", "aclnnFour", "aclnnFive"]
    for s in sigs:
        assert [(p.name, p.kind, p.role) for p in s.user_params] == [("self", T, IN), ("out", T, OUT)]
        assert s.fully_classified
    assert [s.has_launch for s in sigs] == [True, False, False, False, False]


@pytest.mark.parametrize("decl, ctype, name", [
    ("const aclTensor* x", "const aclTensor*", "x"),
    ("const aclTensor *x", "const aclTensor*", "x"),
    ("const aclTensor * x", "const aclTensor*", "x"),
    ("aclTensor const* x", "const aclTensor*", "x"),
    ("aclTensor const *const x", "const aclTensor*", "x"),
    ("const aclTensor* const x", "const aclTensor*", "x"),
    ("aclTensor* x", "aclTensor*", "x"),
    ("aclTensor*x", "aclTensor*", "x"),
    ("struct aclTensor *x", "aclTensor*", "x"),
    ("aclOpExecutor * * executor", "aclOpExecutor**", "executor"),
    ("const int64_t x", "int64_t", "x"),                   # top-level const is not ABI
    ("unsigned long long n", "unsigned long long", "n"),
    ("unsigned int", "unsigned int", None),                # unnamed
    ("const aclTensor*", "const aclTensor*", None),        # unnamed
    ("int64_t dims[]", "int64_t*", "dims"),
    ("const char* mode = \"rint\"", "const char*", "mode"),  # C++ default argument
    ("aclTensor* __restrict out", "aclTensor*", "out"),
    ("void (*callback)(void*, int)", "void*", "callback"),  # a function pointer is a pointer
])
def test_parameter_declarations(decl, ctype, name):
    p = parse_param(decl)
    assert (p.ctype, p.name) == (ctype, name)


def test_multi_line_prototype_with_comments_everywhere():
    text = """
    /* block comment mentioning aclnnGhostGetWorkspaceSize(int x); must not count */
    // line comment: ACLNN_API aclnnStatus aclnnGhost2GetWorkspaceSize(const aclTensor* self);
    ACLNN_API aclnnStatus
    aclnnCommentedGetWorkspaceSize(
        const aclTensor* self,        // the input, "quoted // text"
        /* attributes follow */ int64_t dim, /* inline */ bool keepDim,
        aclTensor* out,               /* the result */
        uint64_t* workspaceSize,
        aclOpExecutor** executor
    );
    """
    sig = one(text)
    assert sig.name == "aclnnCommented"
    assert [(p.name, p.kind, p.role) for p in sig.user_params] == [
        ("self", T, IN), ("dim", Kind.INT, IN), ("keepDim", Kind.BOOL, IN), ("out", T, OUT)]
    assert not sig.has_launch and any("phase-2" in n for n in sig.notes)


def test_unterminated_comment_and_string_literals_do_not_confuse_the_scanner():
    text = 'static const char* kName = "/* not a comment";\n'
    text += proto("const aclTensor* self, aclTensor* out") + "/* tail"
    assert one(text).name == "aclnnTest"


def test_calls_function_pointer_typedefs_and_mentions_are_not_prototypes():
    text = """
    typedef aclnnStatus (*aclnnFooGetWorkspaceSizeFunc)(const aclTensor*, uint64_t*, aclOpExecutor**);
    typedef aclnnStatus (*Phase1)(const aclTensor*, uint64_t*, aclOpExecutor**);
    static inline aclnnStatus wrapper(const aclTensor* t, uint64_t* ws, aclOpExecutor** ex) {
        return aclnnBarGetWorkspaceSize(t, ws, ex);
    }
    """
    assert parse_header_text(text) == []


def test_unnamed_parameters_get_positional_names():
    sig = one(proto("const aclTensor*, double, aclTensor*").replace("uint64_t* workspaceSize", "uint64_t*")
              .replace("aclOpExecutor** executor", "aclOpExecutor**"))
    assert [(p.name, p.kind, p.role) for p in sig.params] == [
        ("arg0", T, IN), ("arg1", Kind.DOUBLE, IN), ("arg2", T, OUT),
        ("arg3", Kind.WORKSPACE_SIZE, OUT), ("arg4", Kind.EXECUTOR, OUT)]
    assert any("unnamed" in n for n in sig.notes)


def test_several_operators_in_one_header_keep_declaration_order_and_repeats_are_ignored():
    params = "const aclTensor* self, aclTensor* out"
    text = proto(params, "aclnnB") + proto(params, "aclnnA") + proto(params, "aclnnB")  # B redeclared
    assert [s.name for s in parse_header_text(text)] == ["aclnnB", "aclnnA"]


# ------------------------------------------------------------------------------------------------
# Kinds
# ------------------------------------------------------------------------------------------------
def test_every_kind():
    text = """
    typedef enum { TEST_MODE_A = 0, TEST_MODE_B = 1 } TestMode;
    enum TestOtherMode { TEST_OTHER = 0 };
    """ + proto(
        "const aclTensor* self, const aclTensorList* tensors, const aclScalar* alpha, "
        "const aclScalarList* scalars, const aclIntArray* dims, const aclFloatArray* scales, "
        "const aclBoolArray* mask, double eps, float beta, int64_t dim, int32_t groups, int8_t cubeMathType, "
        "uint64_t seed, int n, bool keepDim, const char* mode, char* layout, aclDataType dtype, "
        "const aclDataType outDtype, aclFormat format, TestMode tmode, enum TestOtherMode omode, "
        "void* hostData, const int64_t* shape, aclrtStream sideStream, aclTensor* out")
    kinds = {p.name: p.kind for p in one(text).params}
    assert kinds == {
        "self": T, "tensors": TL, "alpha": Kind.SCALAR, "scalars": Kind.SCALAR_LIST,
        "dims": Kind.INT_ARRAY, "scales": Kind.FLOAT_ARRAY, "mask": Kind.BOOL_ARRAY,
        "eps": Kind.DOUBLE, "beta": Kind.FLOAT, "dim": Kind.INT, "groups": Kind.INT,
        "cubeMathType": Kind.INT, "seed": Kind.INT, "n": Kind.INT, "keepDim": Kind.BOOL,
        "mode": Kind.STRING, "layout": Kind.STRING, "dtype": Kind.DTYPE, "outDtype": Kind.DTYPE,
        "format": Kind.ENUM, "tmode": Kind.ENUM, "omode": Kind.ENUM, "hostData": Kind.POINTER,
        "shape": Kind.POINTER, "sideStream": Kind.POINTER, "out": T,
        "workspaceSize": Kind.WORKSPACE_SIZE, "executor": Kind.EXECUTOR,
    }
    assert one(text).fully_classified


def test_enum_defined_in_another_header_of_the_directory(tmp_path):
    (tmp_path / "aclnn_enums.h").write_text("typedef enum { ROUND_A, ROUND_B } RoundKind;\n")
    (tmp_path / "aclnn_op.h").write_text(proto("const aclTensor* self, RoundKind kind, aclTensor* out"))
    assert parse_dir(tmp_path)["aclnnTest"].param("kind").kind is Kind.ENUM
    alone = one(proto("const aclTensor* self, RoundKind kind, aclTensor* out"))
    assert alone.param("kind").kind is Kind.UNKNOWN


def test_unknown_by_value_type_makes_the_operator_not_fully_classified():
    sig = one(proto("const aclTensor* self, MysteryStruct cfg, aclTensor* out"))
    assert sig.param("cfg").kind is Kind.UNKNOWN
    assert not sig.fully_classified
    assert any("MysteryStruct" in n for n in sig.notes)


def test_missing_trailing_pair_is_reported():
    sig = one("aclnnStatus aclnnOddGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws);")
    assert sig.param("ws").kind is Kind.POINTER  # a uint64_t* that is not second to last
    assert not sig.fully_classified and any("does not end with" in n for n in sig.notes)


def test_uint64_pointer_elsewhere_is_a_raw_pointer():
    sig = one(proto("const aclTensor* self, uint64_t* counts, aclTensor* out"))
    assert sig.param("counts").kind is Kind.POINTER


def test_phase2_with_a_different_shape_is_not_counted():
    text = proto("const aclTensor* self, aclTensor* out", launch=False)
    text += "ACLNN_API aclnnStatus aclnnTest(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor);\n"
    assert not one(text).has_launch


# ------------------------------------------------------------------------------------------------
# Roles
# ------------------------------------------------------------------------------------------------
def test_outputs_are_the_trailing_written_tensors_even_with_a_trailing_attribute():
    sig = one(proto("const aclTensor* input, const aclTensor* weight, const aclIntArray* stride, "
                    "aclTensor* output, int8_t cubeMathType"))
    assert roles(sig) == {"input": IN, "weight": IN, "stride": IN, "output": OUT, "cubeMathType": IN}


def test_const_grad_out_input_is_not_an_output():
    sig = one(proto("const aclTensor* gradOut, const aclTensor* self, double scale, aclTensor* gradInput"))
    assert roles(sig) == {"gradOut": IN, "self": IN, "scale": IN, "gradInput": OUT}


def test_written_tensors_before_the_attributes_are_updated_in_place():
    # BatchNorm-like: running statistics are `aclTensor*` among the inputs.
    sig = one(proto("const aclTensor* input, aclTensor* runningMean, aclTensor* runningVar, bool training, "
                    "double momentum, const aclTensor* counts, aclTensor* output, aclTensor* saveMean"))
    assert roles(sig) == {"input": IN, "runningMean": INOUT, "runningVar": INOUT, "training": IN,
                          "momentum": IN, "counts": IN, "output": OUT, "saveMean": OUT}


def test_first_written_tensor_followed_by_inputs_is_inout():
    sig = one(proto("aclTensor* var, const aclTensor* alpha, const aclTensor* delta"))
    assert roles(sig) == {"var": INOUT, "alpha": IN, "delta": IN}


def test_ref_suffix_is_inout_anywhere():
    sig = one(proto("aclTensor* varRef, const aclTensor* mRef, const aclTensor* grad, float lr, "
                    "const aclTensor* stateRefOptional"))
    assert roles(sig) == {"varRef": INOUT, "mRef": INOUT, "grad": IN, "lr": IN, "stateRefOptional": INOUT}
    assert sig.param("stateRefOptional").optional


def test_all_const_prototype_outputs_start_at_the_first_out_name_of_the_trailing_run():
    sig = one(proto("const aclTensor* query, const aclTensor* prevAttnOut, int64_t heads, "
                    "const aclTensor* attentionOut, const aclTensor* softmaxLse"))
    assert roles(sig) == {"query": IN, "prevAttnOut": IN, "heads": IN, "attentionOut": OUT, "softmaxLse": OUT}


@pytest.mark.parametrize("name", ["out", "yOut", "dst_out", "meanOutOptional"])
def test_out_names(name):
    # In a generated header the name is the only mark (no positional fallback there).
    doc = f"/* funtion: aclnnTestGetWorkspaceSize\n * parameters :\n * x : required\n * {name} : required\n */\n"
    sig = one(doc + proto(f"const aclTensor* x, const aclTensor* {name}"))
    assert roles(sig) == {"x": IN, name: OUT} and sig.notes == ()


@pytest.mark.parametrize("name", ["layout", "gradOutput", "outGelu", "Outer"])
def test_names_that_are_not_out_names(name):
    doc = f"/* funtion: aclnnTestGetWorkspaceSize\n * parameters :\n * x : required\n * {name} : required\n */\n"
    sig = one(doc + proto(f"const aclTensor* x, const aclTensor* {name}"))
    assert roles(sig) == {"x": IN, name: IN}


def test_inplace_operators_write_their_first_tensor_and_nothing_else():
    sig = one(proto("aclTensor* selfRef, aclTensor* other", "aclnnInplaceFoo"))   # a non-const input
    assert roles(sig) == {"selfRef": INOUT, "other": IN}
    sig = one(proto("const aclTensor* self, const aclScalar* exponent", "aclnnInplaceBar"))
    assert roles(sig) == {"self": INOUT, "exponent": IN}
    sig = one(proto("const aclTensorList* x", "aclnnForeachZeroInplace"))
    assert roles(sig) == {"x": INOUT}
    sig = one(proto("const aclTensor* x1, const aclTensor* residual, double eps, const aclTensor* normOut",
                    "aclnnInplaceAddNorm"))
    assert roles(sig) == {"x1": INOUT, "residual": IN, "eps": IN, "normOut": OUT}
    # "Inplace" must be a word of the name.
    sig = one(proto("const aclTensor* x, const aclTensor* y", "aclnnInplacement"))
    assert roles(sig)["x"] is IN


def test_unmarked_hand_written_prototype_outputs_follow_the_last_attribute():
    sig = one(proto("const aclTensor* x, const aclTensor* groupIndex, const char* roundMode, int64_t dstType, "
                    "const aclTensor* y, const aclTensor* mxscale"))
    assert roles(sig) == {"x": IN, "groupIndex": IN, "roundMode": IN, "dstType": IN, "y": OUT, "mxscale": OUT}
    assert any("inferred from position" in n for n in sig.notes)


def test_unmarked_prototype_without_separating_attribute_has_one_output():
    sig = one(proto("const aclTensor* x, const aclTensor* dy, const aclTensor* dx"))
    assert roles(sig) == {"x": IN, "dy": IN, "dx": OUT}
    sig = one(proto("const aclTensor* x, const aclTensor* w, const aclTensor* y, float scale, int8_t dtype"))
    assert roles(sig) == {"x": IN, "w": IN, "y": OUT, "scale": IN, "dtype": IN}


def test_unmarked_generated_prototype_has_no_output():
    text = """
    /* funtion: aclnnStepGetWorkspaceSize
     * parameters :
     * tokens : required
     * positions : required
     * numSeqs : required
     */
    __attribute__((visibility("default")))
    aclnnStatus aclnnStepGetWorkspaceSize(
        const aclTensor *tokens,
        const aclTensor *positions,
        int64_t numSeqs,
        uint64_t *workspaceSize,
        aclOpExecutor **executor);
    """
    sig = one(text)
    assert roles(sig) == {"tokens": IN, "positions": IN, "numSeqs": IN}
    assert any("generated" in n for n in sig.notes)


def test_non_tensor_parameters_are_always_inputs():
    sig = one(proto("const aclScalar* selfRef, const aclTensor* other, const aclIntArray* sizesOut, aclTensor* out"))
    assert roles(sig) == {"selfRef": IN, "other": IN, "sizesOut": IN, "out": OUT}


# ------------------------------------------------------------------------------------------------
# Optionality
# ------------------------------------------------------------------------------------------------
def test_optional_applies_to_pointers_only():
    sig = one(proto("const aclTensor* biasOptional, const aclIntArray* padsOptional, "
                    "const aclScalar* alphaOptional, int64_t activeNumOptional, bool flagOptional, "
                    "const char* modeOptional, aclTensor* out"))
    optional = {p.name: p.optional for p in sig.user_params}
    assert optional == {"biasOptional": True, "padsOptional": True, "alphaOptional": True,
                        "activeNumOptional": False, "flagOptional": False, "modeOptional": True, "out": False}


@pytest.mark.parametrize("description, nullable", [
    ("支持传空指针。", True),
    ("数据类型支持BOOL，可为空指针。", True),
    ("可选参数，代表分组。", True),
    ("如果传入空指针，则取默认值。", True),
    ("Optional NPU tensor. Can be nullptr.", True),
    ("may be NULL when unused", True),
    ("不支持空指针。", False),
    ("支持空Tensor，支持非连续的Tensor。", False),
    ("shape与x一致；当batchSizes为nullptr时为定长模式。", False),
    ("输入张量。", False),
])
def test_optional_from_doc_comment(description, nullable):
    text = f"""
    /**
     * @param [in] self: 输入。
     * @param [in] mask: {description}
     * @param [out] out: 输出。
     */
    """ + proto("const aclTensor* self, const aclBoolArray* mask, aclTensor* out")
    sig = one(text)
    assert sig.param("mask").optional is nullable
    assert not sig.param("self").optional


def test_doc_optional_word_does_not_make_a_string_attribute_nullable():
    text = """
    /**
     * @param [in] group: 可选参数，通信域名称。
     * @param [in] other: may be NULL.
     */
    """ + proto("const aclTensor* self, const char* group, const char* other, aclTensor* out")
    sig = one(text)
    assert not sig.param("group").optional
    assert sig.param("other").optional  # an explicit statement counts for any pointer


def test_doc_comment_of_one_prototype_does_not_leak_into_the_next():
    params = "const aclTensor* self, const aclBoolArray* mask, aclTensor* out"
    text = "/** @param [in] mask: 支持传空指针。 */\n" + proto(params, "aclnnA") + proto(params, "aclnnB")
    a, b = parse_header_text(text)
    assert a.param("mask").optional and not b.param("mask").optional


# ------------------------------------------------------------------------------------------------
# Serialisation
# ------------------------------------------------------------------------------------------------
def test_round_trip_through_dict_and_json():
    ops = parse_dir(DATA)
    for sig in ops.values():
        assert OpSignature.from_dict(json.loads(json.dumps(sig.to_dict()))) == sig
    doc = signatures.registry_to_dict(ops, "somewhere")
    assert signatures.registry_from_dict(json.loads(json.dumps(doc))) == ops
    assert list(doc["ops"]) == sorted(ops)


def test_dict_form_uses_plain_values():
    p = Param("x", "const aclTensor*", Kind.TENSOR, Role.IN, True)
    assert p.to_dict() == {"name": "x", "ctype": "const aclTensor*", "kind": "tensor", "role": "in", "optional": True}
    assert Param.from_dict(p.to_dict()) == p


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError):
        signatures.registry_from_dict({"format": 99, "ops": {}})


def test_signatures_are_immutable_and_hashable():
    sig = parse_dir(DATA)["aclnnScaleShift"]
    with pytest.raises(AttributeError):
        sig.name = "x"  # type: ignore[misc]
    assert hash(sig) == hash(OpSignature.from_dict(sig.to_dict()))


def test_convenience_views():
    sig = parse_dir(DATA)["aclnnFusedBlend"]
    assert sig.workspace_function == "aclnnFusedBlendGetWorkspaceSize" and sig.op_name == "FusedBlend"
    assert [p.name for p in sig.outputs] == ["accumRef", "yOut", "countOutOptional"]
    assert [p.name for p in sig.inputs] == ["x", "weightsOptional", "blocks", "ratio", "layout"]
    with pytest.raises(KeyError):
        sig.param("nope")


# ------------------------------------------------------------------------------------------------
# Registry, toolkit discovery, cache, command line
# ------------------------------------------------------------------------------------------------
@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No toolkit in the environment, a private disk cache, an empty in-process cache."""
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH", "PYACLNN_BACKEND"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PYACLNN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(catalog, "_TOOLKIT_DEFAULT_ROOTS", (str(tmp_path / "no-toolkit"),))
    monkeypatch.setattr(catalog, "_memory_cache", {})
    return tmp_path


def make_toolkit(root: Path, *headers: tuple[str, str]) -> Path:
    inc = root / "include" / "aclnnop"
    inc.mkdir(parents=True)
    for name, text in headers:
        (inc / name).write_text(text)
    return inc


def test_registry_without_toolkit_is_the_builtin_set(isolated):
    assert signatures.registry() == dict(signatures.builtin())
    assert set(OUR_OPS) <= set(signatures.registry())


def test_registry_adds_and_overrides_with_a_toolkit(isolated, monkeypatch):
    inc = make_toolkit(isolated / "toolkit",
                       ("aclnn_extra.h", proto("const aclTensor* self, aclTensor* out", "aclnnExtra")),
                       ("aclnn_amp_update_scale.h", proto("const aclTensor* s, aclTensor* out", "aclnnAmpUpdateScale")))
    monkeypatch.setenv("ASCEND_HOME_PATH", str(isolated / "toolkit"))
    assert signatures.toolkit_include_dirs() == [inc]
    reg = signatures.registry()
    assert set(reg) == set(signatures.builtin()) | {"aclnnExtra"}
    assert [p.name for p in reg["aclnnAmpUpdateScale"].user_params] == ["s", "out"]  # the toolkit's word
    # The stub backend cannot call toolkit operators: nothing is discovered then.
    monkeypatch.setenv("PYACLNN_BACKEND", "stub")
    assert signatures.toolkit_include_dirs() == []


def test_custom_operator_packages_come_first(isolated, monkeypatch):
    make_toolkit(isolated / "toolkit", ("aclnn_x.h", proto("const aclTensor* a, aclTensor* out", "aclnnX")))
    custom = isolated / "custom" / "op_api" / "include"
    custom.mkdir(parents=True)
    (custom / "aclnn_x.h").write_text(proto("const aclTensor* b, aclTensor* out", "aclnnX"))
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(isolated / "toolkit"))
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(isolated / "custom"))
    assert signatures.registry()["aclnnX"].user_params[0].name == "b"


def test_explicit_include_dirs(isolated):
    reg = signatures.registry(DATA)
    assert {"aclnnFusedBlend", "aclnnScaleShift"} <= set(reg) and set(OUR_OPS) <= set(reg)


def test_parse_cache_in_memory_on_disk_and_invalidated_by_edits(isolated, monkeypatch):
    inc = make_toolkit(isolated / "tk", ("aclnn_a.h", proto("const aclTensor* self, aclTensor* out", "aclnnA")))
    first = signatures.parse_dir_cached(inc)
    cache_files = list((isolated / "cache").glob("signatures-*.json"))
    assert len(cache_files) == 1

    calls = []
    monkeypatch.setattr(catalog, "parse_dir", lambda p: calls.append(p) or {})
    assert signatures.parse_dir_cached(inc) == first                  # memory
    monkeypatch.setattr(catalog, "_memory_cache", {})
    assert signatures.parse_dir_cached(inc) == first and calls == []  # disk

    header = inc / "aclnn_a.h"
    header.write_text(proto("const aclTensor* self, double eps, aclTensor* out", "aclnnA"))
    os.utime(header, ns=(header.stat().st_atime_ns, header.stat().st_mtime_ns + 10**9))
    signatures.parse_dir_cached(inc)
    assert calls == [inc.resolve()]                                   # re-parsed after the edit


def test_unwritable_cache_directory_is_harmless(isolated, monkeypatch):
    blocker = isolated / "file"
    blocker.write_text("")
    monkeypatch.setenv("PYACLNN_CACHE_DIR", str(blocker / "sub"))
    assert "aclnnScaleShift" in signatures.parse_dir_cached(DATA)


def test_command_line_writes_checks_and_prints(tmp_path, capsys):
    out = tmp_path / "reg.json"
    assert main([str(DATA), "-o", str(out)]) == 0
    assert signatures.registry_from_dict(json.loads(out.read_text())) == parse_dir(DATA)
    assert main([str(DATA), "-o", str(out), "--check"]) == 0
    out.write_text(out.read_text().replace('"in"', '"out"', 1))
    assert main([str(DATA), "-o", str(out), "--check"]) == 1
    capsys.readouterr()
    assert main([str(DATA), "--summary"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ops"].keys() == parse_dir(DATA).keys()
    assert "GetWorkspaceSize found:  6 (4 distinct operators)" in captured.err
    assert "fully classified:        6" in captured.err


def test_command_line_rejects_a_missing_directory(tmp_path):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "missing")])


def test_render_puts_one_parameter_per_line():
    text = render(parse_dir(DATA), "x")
    assert '{ "name": "self", "ctype": "const aclTensor*", "kind": "tensor", "role": "in", "optional": false }' in text
