"""From definitions to what the C code needs: parameter kinds and roles, steps, executor tensors.

Kinds, roles and optionality come from pyaclnn's own header parser (pyaclnn/signatures), run on the
header text the generator writes: the signature registry of the Python package, the roles of the
emulator's executors and the shipped headers therefore come from one reading of one prototype.
"""
from __future__ import annotations

import importlib.util
import re
import shlex
import sys
import types
from pathlib import Path

from .headers import by_header, header_text
from .model import DefinitionError, DtypeList, Family, Op, Param, Step

_INT = re.compile(r"^-?\d+$")


def load_signatures(sig_dir: Path):
    """pyaclnn/signatures as a standalone package (standard library only; pyaclnn itself needs numpy).

    It is loaded as the subpackage of an empty stand-in for pyaclnn (its __init__ never runs), so its relative
    imports of pyaclnn's leaf modules (``from .._exceptions import ...``) resolve to the files beside it."""
    parent, name = "_opgen_pyaclnn", "_opgen_pyaclnn.signatures"
    if name in sys.modules:
        return sys.modules[name]
    if parent not in sys.modules:
        pkg = types.ModuleType(parent)
        pkg.__path__ = [str(sig_dir.parent)]
        sys.modules[parent] = pkg
    spec = importlib.util.spec_from_file_location(name, sig_dir / "__init__.py",
                                                  submodule_search_locations=[str(sig_dir)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def attach_signatures(families: list[Family], sig) -> dict[str, str]:
    """Parses every generated header; sets op.params / op.signature. Returns {header: text}."""
    ops = [op for fam in families for op in fam.ops]
    texts = {}
    for header, group in by_header(ops).items():
        text = header_text(header, group)
        texts[header] = text
        parsed = {s.name: s for s in sig.parse_header_text(text, header)}
        for op in group:
            s = parsed.get(op.launch)
            if s is None:
                raise DefinitionError(f"{op.file} ({op.name}): the header parser does not find the prototype")
            user = [p for p in s.params if p.kind.value not in ("workspace_size", "executor")]
            # the parser drops the const of a by-value parameter ("const bool accumulate" reads back as bool)
            written = [(c[6:] if c.startswith("const ") and "*" not in c else c, n) for c, n in op.cparams]
            if [(p.ctype, p.name) for p in user] != written:
                raise DefinitionError(f"{op.file} ({op.name}): params {op.cparams} read back as "
                                      f"{[(p.ctype, p.name) for p in user]}")
            bad = [p.name for p in user if p.kind.value == "unknown"]
            if bad:
                raise DefinitionError(f"{op.file} ({op.name}): parameters of unknown type: {bad}")
            op.params = [Param(p.name, p.ctype, p.kind.value, p.role.value, p.optional) for p in user]
            op.signature = s.to_dict()
    return texts


def _tokens(text: str, where: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError as exc:
        raise DefinitionError(f"{where}: {exc}") from None


def resolve_steps(fam: Family, op: Op) -> None:
    where = f"{op.file} ({op.name})"
    names = [p.name for p in op.params]
    checks = list(op.checks)
    pointer_kinds = {"tensor", "tensor_list", "scalar", "scalar_list", "int_array", "float_array", "bool_array"}
    # a null check is any step named not_null... (not_null_inner, not_null_stack: other codes, same role)
    def null_check(c: str) -> bool:
        return c.split()[0].startswith("not_null")
    if not any(null_check(c) for c in checks):
        required = [p.name for p in op.params if p.kind in pointer_kinds and not p.optional]
        checks.insert(0, "not_null " + " ".join(required))
    if not any(c.split()[0] == "read" for c in checks):
        # right after the (first run of) null checks
        k = next(i for i, c in enumerate(checks) if null_check(c))
        while k < len(checks) and null_check(checks[k]):
            k += 1
        checks.insert(k, "read")
    op.checks = checks
    steps = []
    for text in checks:
        toks = _tokens(text, where)
        name, rest = toks[0], toks[1:]
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise DefinitionError(f"{where}: step {text!r}: a step name is lower_case (the C function opc_<name>)")
        params, labels, n, dlist, txt = [], [], None, None, None
        raw = re.findall(r'"[^"]*"|\S+', text)[1:]
        for tok, rawtok in zip(rest, raw):
            if rawtok.startswith('"'):
                if txt is not None:
                    raise DefinitionError(f"{where}: step {text!r} has two strings")
                txt = tok
            elif tok.split("@")[0] in names and tok.count("@") <= 1:
                pname, _, label = tok.partition("@")
                params.append(names.index(pname))
                labels.append(label or None)
            elif _INT.match(tok):
                if n is not None:
                    raise DefinitionError(f"{where}: step {text!r} has two integers")
                n = int(tok)
            elif tok in fam.lists or "|" in tok:
                if dlist is not None:
                    raise DefinitionError(f"{where}: step {text!r} has two dtype lists")
                if tok in fam.lists:
                    dlist = fam.lists[tok]
                else:
                    from .load import dtype_list
                    dlist = dtype_list(fam.name, "_" + tok.replace("|", "_"), " ".join(tok.split("|")), where)
                    fam.lists.setdefault(dlist.name, dlist)
            else:
                raise DefinitionError(f"{where}: step {text!r}: {tok!r} is not a parameter of aclnn{op.name} "
                                      f"({', '.join(names)}), a dtype list ({', '.join(sorted(fam.lists))}), "
                                      f"an integer or a \"string\"")
        if len(params) > 16:
            raise DefinitionError(f"{where}: step {text!r} names more than 16 parameters")
        steps.append(Step(name, tuple(params), tuple(labels), n, dlist, txt, text))
    op.steps = steps


def resolve_executor(op: Op) -> None:
    where = f"{op.file} ({op.name})"
    names = [p.name for p in op.params]

    def pick(override, roles):
        if override is not None:
            # "-": a slot of the kernel that no parameter of this operator fills (NULL, e.g. an input the V1 form
            # of a kernel shared with V2 lacks)
            bad = [n for n in override if n != "-" and (n not in names or op.params[names.index(n)].kind != "tensor")]
            if bad:
                raise DefinitionError(f"{where}: executor tensors must be tensor parameters (or - for an empty "
                                      f"slot); not: {bad}")
            return [-1 if n == "-" else names.index(n) for n in override]
        return [i for i, p in enumerate(op.params) if p.kind == "tensor" and p.role in roles]

    op.executor_inputs = pick(op.inputs, ("in", "inout"))
    op.executor_outputs = pick(op.outputs, ("out", "inout"))
    if len(op.executor_inputs) > 16 or len(op.executor_outputs) > 16:
        raise DefinitionError(f"{where}: more than 16 executor inputs or outputs")


def check_list_names(families: list[Family]) -> None:
    """A dtype list's C name is its family's and its own: two definition files of one family folder may not
    give one name to two different lists."""
    used: dict[str, tuple[DtypeList, str]] = {}
    for fam in families:
        for op in fam.ops:
            for st in op.steps:
                if st.dlist is None:
                    continue
                seen, where = used.setdefault(st.dlist.c_name, (st.dlist, op.file))
                if seen.socs != st.dlist.socs:
                    raise DefinitionError(f"{op.file} ({op.name}): dtype list {st.dlist.name} differs from the list "
                                          f"of that name in {where} (same family folder); rename one")


def resolve(families: list[Family], sig) -> dict[str, str]:
    texts = attach_signatures(families, sig)
    for fam in families:
        for op in fam.ops:
            resolve_steps(fam, op)
            resolve_executor(op)
    check_list_names(families)
    return texts


def dtype_tables(op: Op) -> dict[str, dict[str, list[str]]]:
    """{parameter: {SoC: dtypes}} from the operator's steps that check a dtype list (the catalog, the support
    table): each tensor or scalar operand of such a step, the first list that names it."""
    out: dict[str, dict[str, list[str]]] = {}
    for st in op.steps:
        if st.dlist is not None:
            for i in st.params:
                kinds = ("tensor", "tensor_list") + (("scalar", "dtype") if st.name == "dtype_in" else ())
                if op.params[i].kind not in kinds:   # a family step may take a scalar for another reason
                    continue
                out.setdefault(op.params[i].name, {soc: list(v) for soc, v in
                                                   zip(("other", "A2", "950"), st.dlist.socs)})
    return out


__all__ = ["resolve", "load_signatures", "dtype_tables", "DtypeList"]
