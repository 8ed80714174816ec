"""Reading the operator definitions: src/ops/lists.toml, src/ops/templates.toml and src/ops/<family>/*.toml.

The format is described in native_stubs/DESIGN.md ("Operators as data"). In short, a family file has

    [family]            doc, domain, and the family's per-operator data type (spec_type ...)
    [lists]             named dtype lists: "FLOAT FLOAT16", or per SoC {A2 = "...", 950 = "...", other = "..."}
    [[op]]              one table per operator (or per row, when it names templates)

and an operator row that names templates (`template = "ew_unary"` or a list) becomes one operator per
template: the template's fields with `$var` / `${var}` replaced by the row's fields (`$name` is the
row's name, `$snake` its snake_case), then the row's own operator fields on top.
"""
from __future__ import annotations

import re
from pathlib import Path

from .model import FIDELITY_CLASSES, SOCS, DefinitionError, DtypeList, Family, Op

try:
    import tomllib
except ModuleNotFoundError:          # Python 3.10: the same parser, as a package (pyproject's build requires)
    import tomli as tomllib          # type: ignore[no-redef]

# Fields of an operator (anything else in a row is a template variable).
OP_FIELDS = {"name", "params", "header", "domain", "doc", "source", "checks", "kernel", "inputs", "outputs",
             "spec", "fidelity", "note", "nullable", "executor", "launch_status", "extra"}
ROW_ONLY = {"template"}
FAMILY_FIELDS = {"doc", "domain", "spec_type", "spec_header", "spec_functions", "includes"}
KNOWN_DTYPES = {
    "FLOAT", "FLOAT16", "INT8", "INT32", "UINT8", "INT16", "UINT16", "UINT32", "INT64", "UINT64", "DOUBLE",
    "BOOL", "STRING", "COMPLEX64", "COMPLEX128", "BF16", "INT4", "UINT1", "COMPLEX32", "HIFLOAT8",
    "FLOAT8_E5M2", "FLOAT8_E4M3FN", "FLOAT8_E8M0", "FLOAT6_E3M2", "FLOAT6_E2M3", "FLOAT4_E2M1", "FLOAT4_E1M2",
}
_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def snake(name: str) -> str:
    """'AddRmsNormDynamicQuantV2' -> 'add_rms_norm_dynamic_quant_v2' (the vendor's header names)."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def _read(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise DefinitionError(f"{path}: {exc}") from None


def dtype_list(family: str, name: str, value, where: str) -> DtypeList:
    """A [lists] entry: one string for every SoC, or a table of SoC -> string ('other' defaults to A2's)."""
    def names(text, soc):
        if not isinstance(text, str):
            raise DefinitionError(f"{where}: list {name} ({soc}) must be a string of dtype names")
        out = tuple(text.split())
        bad = [d for d in out if d not in KNOWN_DTYPES]
        if bad:
            raise DefinitionError(f"{where}: list {name}: unknown dtype(s) {', '.join(bad)} "
                                  f"(dtype names are aclDataType's without ACL_: {', '.join(sorted(KNOWN_DTYPES))})")
        return out
    if isinstance(value, str):
        one = names(value, "all")
        return DtypeList(family, name, (one, one, one))
    if isinstance(value, dict):
        extra = set(value) - set(SOCS)
        if extra or "A2" not in value or "950" not in value:
            raise DefinitionError(f"{where}: list {name} per SoC needs the keys A2 and 950 (and may have other); "
                                  f"got {sorted(value)}")
        a2, n950 = names(value["A2"], "A2"), names(value["950"], "950")
        other = names(value["other"], "other") if "other" in value else a2
        return DtypeList(family, name, (other, a2, n950))
    raise DefinitionError(f"{where}: list {name} must be a string or a table per SoC")


def _substitute(value, variables: dict, where: str):
    if isinstance(value, str):
        def repl(m):
            key = m.group(1) or m.group(2)
            if key not in variables:
                raise DefinitionError(f"{where}: the template uses ${key}, which the row does not give")
            v = variables[key]
            if not isinstance(v, (str, int)):
                raise DefinitionError(f"{where}: ${key} must be a string or a number")
            return str(v)
        return _VAR.sub(repl, value)
    if isinstance(value, list):
        return [_substitute(v, variables, where) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, variables, where) for k, v in value.items()}
    return value


def _expand(row: dict, templates: dict, family_vars: dict, where: str) -> list[dict]:
    """A row -> the operator tables it stands for.

    Variables: the family's [vars], then the template's own `vars` (defaults, which may use the row's),
    then the row's fields; `$name` is the row's name and `$snake` its snake_case.
    """
    if "name" not in row:
        raise DefinitionError(f"{where}: a row needs a name")
    builtins = {"name": row["name"], "snake": snake(row["name"])}
    row = _substitute({k: v for k, v in row.items() if k != "template"}, {**family_vars, **builtins, **row},
                      f"{where} ({row['name']})") | ({"template": row["template"]} if "template" in row else {})
    names = row.get("template")
    if names is None:
        return [row]
    names = [names] if isinstance(names, str) else list(names)
    out = []
    for t in names:
        if t not in templates:
            raise DefinitionError(f"{where} ({row['name']}): unknown template {t!r} "
                                  f"(templates: {', '.join(sorted(templates))})")
        tw = f"{where} ({row['name']}, template {t})"
        template = dict(templates[t])
        defaults = template.pop("vars", {})
        variables = {**family_vars, **builtins, **{k: v for k, v in row.items() if k not in ROW_ONLY}}
        variables = {**_substitute(defaults, variables, tw), **variables}
        op = _substitute(template, variables, tw)
        op.setdefault("name", row["name"])
        # the row's own operator fields win, except the name a template derives (Inplace$name)
        for k, v in row.items():
            if k in OP_FIELDS and not (k == "name" and "name" in template):
                op[k] = v
        out.append(op)
    return out


def _split_params(text: str, where: str) -> list[tuple[str, str]]:
    params = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        m = re.match(r"^(.*?)([A-Za-z_]\w*)$", part)
        if not m or not m.group(1).strip():
            raise DefinitionError(f"{where}: cannot read parameter {part!r} (write 'type name')")
        ctype = " ".join(m.group(1).replace("*", " * ").split()).replace(" *", "*")
        params.append((ctype, m.group(2)))
    return params


def _words(value, where: str, field_name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.split()
    raise DefinitionError(f"{where}: {field_name} must be a string of parameter names")


def load_family(path: Path, root: Path, templates: dict, shared_lists: dict[str, DtypeList]) -> Family:
    doc = _read(path)
    rel = path.relative_to(root.parent.parent).as_posix() if root.parent.parent in path.parents else str(path)
    family = path.parent.name
    head = doc.get("family", {})
    unknown = set(head) - FAMILY_FIELDS
    if unknown:
        raise DefinitionError(f"{rel}: unknown [family] field(s) {sorted(unknown)} (known: {sorted(FAMILY_FIELDS)})")
    unknown = set(doc) - {"family", "lists", "op", "template", "vars"}
    if unknown:
        raise DefinitionError(f"{rel}: unknown table(s) {sorted(unknown)} (known: family, vars, lists, template, op)")
    lists = dict(shared_lists)
    # a family's files each have their own [lists]: two files may use one name for different lists
    owner = family if path.stem == family else f"{family}_{path.stem}"
    for name, value in doc.get("lists", {}).items():
        lists[name] = dtype_list(owner, name, value, rel)
    local_templates = dict(templates)
    local_templates.update(doc.get("template", {}))
    fam = Family(name=family, file=rel, doc=head.get("doc", ""), domain=head.get("domain", ""),
                 spec_type=head.get("spec_type"), spec_header=head.get("spec_header"),
                 spec_functions=dict(head.get("spec_functions", {})), includes=list(head.get("includes", [])),
                 lists=lists, ops=[])
    for i, row in enumerate(doc.get("op", [])):
        where = f"{rel} [[op]] #{i + 1}"
        for table in _expand(row, local_templates, doc.get("vars", {}), where):
            unknown = set(table) - OP_FIELDS
            if unknown and "template" not in row:
                raise DefinitionError(f"{where} ({table.get('name')}): unknown field(s) {sorted(unknown)} "
                                      f"(operator fields: {sorted(OP_FIELDS)}; other row fields only fill templates)")
            fam.ops.append(_op(table, fam, where))
    return fam


def _op(t: dict, fam: Family, where: str) -> Op:
    for required in ("name", "params", "fidelity", "note"):
        if required not in t:
            raise DefinitionError(f"{where} ({t.get('name', '?')}): missing field {required!r}")
    name = t["name"]
    where = f"{where} ({name})"
    if not re.fullmatch(r"[A-Z]\w*", name):
        raise DefinitionError(f"{where}: the name is the part after 'aclnn', starting with a capital letter")
    if t["fidelity"] not in FIDELITY_CLASSES:
        raise DefinitionError(f"{where}: fidelity must be one of {', '.join(FIDELITY_CLASSES)} (pyaclnn/ops/_fidelity.py)")
    checks = t.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
        raise DefinitionError(f"{where}: checks must be a list of strings")
    spec = t.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise DefinitionError(f"{where}: spec must be a table of C initialisers")
    if spec is not None and not fam.spec_type:
        raise DefinitionError(f"{where}: spec needs the family's spec_type in [family]")
    op = Op(name=name, family=fam.name, file=fam.file, header=t.get("header", f"aclnn_{snake(name)}.h"),
            domain=t.get("domain", fam.domain), doc=t.get("doc", ""), source=t.get("source", ""),
            cparams=_split_params(t["params"], where), checks=[" ".join(c.split()) for c in checks if c.strip()],
            kernel=t.get("kernel") or None, inputs=_words(t.get("inputs"), where, "inputs"),
            outputs=_words(t.get("outputs"), where, "outputs"), spec=spec, fidelity=t["fidelity"], note=t["note"])
    op.nullable = list(t.get("nullable", []))   # type: ignore[attr-defined]
    extra = t.get("extra", [])
    if not isinstance(extra, list) or not all(isinstance(e, str) and re.fullmatch(r"aclnnStatus aclnn\w+\(.*\)", e)
                                                for e in extra):
        raise DefinitionError(f"{where}: extra is a list of prototypes 'aclnnStatus aclnnXxx(...)' of functions the "
                              f"family's C file exports beside the two phases (declared in the operator's header)")
    op.extra = list(extra)
    op.exec_name = t.get("executor")
    if op.exec_name is not None and not re.fullmatch(r"[A-Z]\w*", str(op.exec_name)):
        raise DefinitionError(f"{where}: executor is the name of the operator the executor runs, without aclnn "
                              f"(e.g. the L0 operator a V2 form shares with V1)")
    op.launch_status = t.get("launch_status")
    if op.launch_status is not None and not re.fullmatch(r"ACLNN_ERR_\w+", str(op.launch_status)):
        raise DefinitionError(f"{where}: launch_status is the aclnn status phase 2 returns for any failure "
                              f"(ACLNN_ERR_..., aclnn/opdev/op_errno.h)")
    # the trailing pair is implied; a header that names it otherwise spells it out
    if len(op.cparams) >= 2 and op.cparams[-2][0] == "uint64_t*" and op.cparams[-1][0] == "aclOpExecutor**":
        op.trailing = (op.cparams[-2][1], op.cparams[-1][1])
        op.cparams = op.cparams[:-2]
    return op


def load_all(ops_dir: Path) -> list[Family]:
    """Every family under ops_dir (src/ops), in folder order; operator names must be unique."""
    shared: dict[str, DtypeList] = {}
    lists_file = ops_dir / "lists.toml"
    if lists_file.exists():
        for name, value in _read(lists_file).get("lists", {}).items():
            shared[name] = dtype_list("", name, value, str(lists_file))
    templates: dict = {}
    tfile = ops_dir / "templates.toml"
    if tfile.exists():
        templates = _read(tfile).get("template", {})
    families = [load_family(p, ops_dir, templates, shared)
                for p in sorted(ops_dir.glob("*/*.toml"))]
    seen: dict[str, str] = {}
    for fam in families:
        for op in fam.ops:
            if op.name in seen:
                raise DefinitionError(f"{op.file}: operator {op.name} is also defined in {seen[op.name]}")
            seen[op.name] = op.file
    return families
