"""The operator generator (native_stubs/tools/opgen): what it makes of a definition, and the one-line errors
it stops the build with when a definition is wrong (native_stubs/DESIGN.md)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OPGEN = REPO / "native_stubs" / "tools" / "opgen" / "__main__.py"
SIGNATURES = REPO / "pyaclnn" / "signatures"
TEMPLATES = (REPO / "native_stubs" / "src" / "ops" / "templates.toml").read_text()

FAMILY = """
[family]
domain = "aclnn_math"
spec_type = "ew_spec"
spec_header = "opbase/pointwise.h"

[lists]
FL = { A2 = "FLOAT FLOAT16", 950 = "FLOAT FLOAT16 BF16" }
"""
ROW = """
[[op]]
name = "Twice"
doc = "out = 2 * self."
params = "const aclTensor* self, aclTensor* out"
checks = ["not_null self out", "dtype_in self FL", "same_shape out self", "twice_plan self"]
kernel = "twice_kernel"
fidelity = "a"
note = "exact"
"""


def run(tmp_path: Path, family: str, templates: str = TEMPLATES, static: str | None = None):
    ops = tmp_path / "ops"
    (ops / "fam").mkdir(parents=True, exist_ok=True)
    (ops / "templates.toml").write_text(templates)
    (ops / "fam" / "fam.toml").write_text(textwrap.dedent(family))
    cmd = [sys.executable, str(OPGEN), "--ops", str(ops), "--signatures", str(SIGNATURES), "--out", str(tmp_path / "gen")]
    if static is not None:
        inc = tmp_path / "include" / "aclnnop"
        inc.mkdir(parents=True, exist_ok=True)
        (inc / "aclnn_twice.h").write_text(static)
        cmd += ["--static-include", str(tmp_path / "include")]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_a_definition_becomes_tables_functions_header_and_catalog(tmp_path):
    proc = run(tmp_path, FAMILY + ROW)
    assert proc.returncode == 0, proc.stderr
    gen = tmp_path / "gen"
    c = (gen / "ops_defs.c").read_text()
    assert "aclnnStatus aclnnTwiceGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize" in c
    assert "return op_phase1(&D_Twice, a, workspaceSize, executor);" in c
    assert 'pyaclnn_stub_executor_run("aclnnTwice", workspace' in c
    # the steps in order, their operands by index, the per-SoC list (other = A2's)
    assert '{opc_dtype_in, "dtype_in", {0}, 1, 0, 0, &DL_fam_FL, NULL, NULL}' in c
    assert "DL_fam_FL_other[] = {ACL_FLOAT, ACL_FLOAT16}" in c and "DL_fam_FL_950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}" in c
    decls = (gen / "ops_decls.h").read_text()
    assert "aclnnStatus opc_twice_plan(op_call *c, const op_step *s);" in decls
    assert "void twice_kernel(const pyaclnn_stub_launch *launch);" in decls
    header = (gen / "include" / "aclnnop" / "aclnn_twice.h").read_text()
    assert "ACLNN_API aclnnStatus aclnnTwice(void* workspace" in header and "@domain aclnn_math" in header
    cat = json.loads((gen / "ops.json").read_text())
    sig = cat["signatures"]["ops"]["aclnnTwice"]
    assert [(p["name"], p["role"]) for p in sig["params"]][:2] == [("self", "in"), ("out", "out")]
    op = cat["operators"]["aclnnTwice"]
    assert op["fidelity"] == "a" and op["dtypes"]["self"]["950"] == ["FLOAT", "FLOAT16", "BF16"]
    # the implied first steps: not_null of the pointers, then read
    assert op["checks"][:2] == ["not_null self out", "read"]


def test_rows_on_templates_expand_with_their_variables(tmp_path):
    family = FAMILY + """
[[op]]
name = "Thing"
template = ["unary", "unary_inplace"]
ew = "NEG"
dtypes = "FL"
fidelity = "a"
note = "exact"
"""
    proc = run(tmp_path, family)
    assert proc.returncode == 0, proc.stderr
    cat = json.loads((tmp_path / "gen" / "ops.json").read_text())
    assert {"aclnnThing", "aclnnInplaceThing"} <= set(cat["operators"])
    assert cat["signatures"]["ops"]["aclnnInplaceThing"]["header"] == "aclnn_thing.h"
    c = (tmp_path / "gen" / "ops_defs.c").read_text()
    assert "static const ew_spec SPEC_InplaceThing = {.op = EW_OP_NEG, .promote = EW_PROMOTE_KEEP" in c


@pytest.mark.parametrize("change,message", [
    ('checks = ["not_null self out", "dtype_in self NOPE"]', "'NOPE' is not a parameter of aclnnTwice"),
    ('checks = ["dtype_in self FL", "Bad-Step self"]', "a step name is lower_case"),
    ('fidelity = "z"', "fidelity must be one of a, b, c, s, v"),
    ('params = "const aclTensor*"', "cannot read parameter"),
    ('name = "twice"', "the name is the part after 'aclnn'"),
])
def test_definition_errors_name_the_file_operator_and_problem(tmp_path, change, message):
    key = change.split(" = ")[0]
    row = "\n".join(change if line.startswith(key + " = ") else line for line in ROW.splitlines())
    proc = run(tmp_path, FAMILY + row)
    assert proc.returncode == 1
    assert proc.stderr.startswith("opgen: error: ") and message in proc.stderr and "fam.toml" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unknown_dtype_missing_field_and_unknown_template(tmp_path):
    proc = run(tmp_path, FAMILY.replace('"FLOAT FLOAT16"', '"FLOAT HALF"') + ROW)
    assert proc.returncode == 1 and "unknown dtype(s) HALF" in proc.stderr
    proc = run(tmp_path, FAMILY + ROW.replace('note = "exact"\n', ""))
    assert proc.returncode == 1 and "missing field 'note'" in proc.stderr
    proc = run(tmp_path, FAMILY + '[[op]]\nname = "X"\ntemplate = "nope"\n')
    assert proc.returncode == 1 and "unknown template 'nope'" in proc.stderr
    proc = run(tmp_path, FAMILY + '[[op]]\nname = "X"\ntemplate = "unary"\nfidelity = "a"\nnote = "n"\n')
    assert proc.returncode == 1 and "uses $dtypes, which the row does not give" in proc.stderr


def test_an_operator_is_defined_once(tmp_path):
    proc = run(tmp_path, FAMILY + ROW + ROW)
    assert proc.returncode == 1 and "operator Twice is also defined in" in proc.stderr


def test_a_generated_header_may_not_also_be_hand_written(tmp_path):
    proc = run(tmp_path, FAMILY + ROW, static="/* old */\n")
    assert proc.returncode == 1 and "aclnn_twice.h" in proc.stderr and "delete the hand-written copies" in proc.stderr


def test_unchanged_outputs_are_not_rewritten(tmp_path):
    assert run(tmp_path, FAMILY + ROW).returncode == 0
    out = tmp_path / "gen" / "ops_defs.c"
    before = out.stat().st_mtime_ns
    assert run(tmp_path, FAMILY + ROW).returncode == 0
    assert out.stat().st_mtime_ns == before          # so the build does not recompile anything


def test_an_own_not_null_anywhere_replaces_the_implied_one_and_empty_template_checks_go(tmp_path):
    # the vendor may check an attribute before the pointers (DivMod's mode): the definition's own not_null
    # step, wherever it stands, is the only one; a check a template's variables leave empty is left out
    templates = TEMPLATES + '''
[template.twice_mode]
vars = { first = "" }
params = "const aclTensor* self, int mode, aclTensor* out"
checks = ["$first", "not_null self out", "$first", "twice_plan self"]
kernel = "twice_kernel"
'''
    family = FAMILY + """
[[op]]
name = "TwiceA"
template = "twice_mode"
first = "twice_mode mode"
fidelity = "a"
note = "exact"

[[op]]
name = "TwiceB"
template = "twice_mode"
fidelity = "a"
note = "exact"
"""
    proc = run(tmp_path, family, templates=templates)
    assert proc.returncode == 0, proc.stderr
    ops = json.loads((tmp_path / "gen" / "ops.json").read_text())["operators"]
    assert ops["aclnnTwiceA"]["checks"] == ["twice_mode mode", "not_null self out", "read", "twice_mode mode",
                                            "twice_plan self"]
    assert ops["aclnnTwiceB"]["checks"] == ["not_null self out", "read", "twice_plan self"]


def test_executor_name_launch_status_and_empty_executor_slots(tmp_path):
    # a V2 form running its V1's executor, a phase 2 that maps every failure to one status, a kernel input slot the
    # operator has no parameter for (native_stubs/DESIGN.md: executor, launch_status, inputs with -)
    row = ROW.replace('name = "Twice"', 'name = "TwiceV2"').replace(
        'kernel = "twice_kernel"', 'kernel = "twice_kernel"\nexecutor = "Twice"\nlaunch_status = "ACLNN_ERR_INNER"\n'
                                   'inputs = "self -"')
    proc = run(tmp_path, FAMILY + row)
    assert proc.returncode == 0, proc.stderr
    c = (tmp_path / "gen" / "ops_defs.c").read_text()
    assert ('static const op_def D_TwiceV2 = {"TwiceV2", "aclnnTwiceV2GetWorkspaceSize", P_TwiceV2, 2, S_TwiceV2, 5, '
            'twice_kernel, {0, -1}, 2, {1}, 1, NULL, "Twice"};') in c
    assert 'return rc == ACLNN_SUCCESS ? ACLNN_SUCCESS : ACLNN_ERR_INNER;' in c
    # without them: the definition's own name, the status of the failure
    proc = run(tmp_path, FAMILY + ROW)
    c = (tmp_path / "gen" / "ops_defs.c").read_text()
    assert "{0}, 1, {1}, 1, NULL, NULL};" in c and "return pyaclnn_stub_executor_run(\"aclnnTwice\"" in c


@pytest.mark.parametrize("extra,message", [
    ('executor = "aclnnTwice"', "executor is the name of the operator the executor runs"),
    ('launch_status = "561000"', "launch_status is the aclnn status phase 2 returns"),
    ('inputs = "self nope"', "executor tensors must be tensor parameters (or - for an empty slot); not: ['nope']"),
])
def test_executor_field_errors(tmp_path, extra, message):
    proc = run(tmp_path, FAMILY + ROW.replace('kernel = "twice_kernel"', f'kernel = "twice_kernel"\n{extra}'))
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr


def test_no_raw_arithmetic_on_a_callers_int_attribute():
    # A caller's int64 attribute (groups, a repeat count ...) in a raw product or sum overflows (undefined in C)
    # for values near the int64 limits, which the fuzzer draws; op_mul_sat / op_add_sat / op_sub_sat
    # (opbase/checks.h) saturate instead, so that the checks refuse what the vendor's would.
    raw = re.compile(r"op_argument\([^()]*\)->i\s*[-*+](?![-+=])|[^-+][-*+]\s*\(?op_argument\([^()]*\)->i")
    src = Path(__file__).resolve().parents[1] / "native_stubs" / "src"
    hits = [f"{p.relative_to(src)}:{n}: {line.strip()}" for p in sorted(src.rglob("*.c"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if raw.search(line)]
    assert not hits, "\n".join(hits)


def test_the_build_holds_the_checked_in_capi_tables_to_the_headers(tmp_path):
    # The measured operators' families (their headers are in the tree the check reads) against a copy of
    # pyaclnn/capi with one constant changed: the build stops naming the stale file, and what it generated
    # from the headers is the checked-in text.
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "templates.toml").write_text(TEMPLATES)
    for family in ("amp_update_scale", "add_rms_norm_dynamic_quant", "grouped_dynamic_mx_quant"):
        (ops / family).mkdir()
        for toml in (REPO / "native_stubs" / "src" / "ops" / family).glob("*.toml"):
            (ops / family / toml.name).write_text(toml.read_text())
    capi = tmp_path / "capi"
    capi.mkdir()
    for name in ("_functions.py", "_constants.py", "_enums.py"):
        (capi / name).write_text((REPO / "pyaclnn" / "capi" / name).read_text())
    constants = (capi / "_constants.py").read_text()
    assert "\nACL_FLOAT = 0\n" in constants
    (capi / "_constants.py").write_text(constants.replace("\nACL_FLOAT = 0\n", "\nACL_FLOAT = 9\n"))
    proc = subprocess.run([sys.executable, str(OPGEN), "--ops", str(ops), "--signatures", str(SIGNATURES),
                           "--out", str(tmp_path / "gen"), "--static-include", str(REPO / "native_stubs" / "include"),
                           "--capi-check", str(capi)], capture_output=True, text=True)
    assert proc.returncode == 1 and "_constants.py of" in proc.stderr and "_functions.py" not in proc.stderr
    for name in ("_functions.py", "_constants.py", "_enums.py"):
        assert (tmp_path / "gen" / "capi" / name).read_text() == (REPO / "pyaclnn" / "capi" / name).read_text()
