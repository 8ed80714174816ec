"""How faithfully the CPU emulator reproduces each operator it implements: the support table of
``python -m pyaclnn info --ops``.

Classes:
  (a) bit-exact by construction: moves, indexing, comparisons, IEEE +, -, *, /, sqrt, casts with
      the NPU's rounding -- one correctly rounded step, or none;
  (b) exact to the vendor's documented algorithm where its source shows it (the quantisers, Axpy);
  (c) tolerance-level: the NPU's transcendental approximations and accumulation order are not
      published; the emulator computes in float64 with libm, rounds once to fp32 and then to the
      output dtype, and states the tolerance its tests check;
  (s) statistical only: random-number operators. The NPU's generator streams cannot be reproduced
      without its kernels, so the emulator draws from its own documented stream (Philox4x32-10 keyed
      by the seed, counter (element, offset)): the same (seed, offset) gives the same numbers,
      different offsets different streams, and the tests check distributions (bounds, mean,
      variance, keep rate) on large draws -- never the NPU's values;
  (v) validation only: the vendor's checks in its order with its codes and messages, and then the
      computation refused with 161002 naming what the emulator does not model (an operator whose only
      vendor paths are ones the emulator cannot compute yet: a clear error instead of "not found").
Each class is backed by tests against an independent reference (the test named in the note's
file: tests/test_elementwise_*.py, tests/test_<operator>.py).
"""
from __future__ import annotations

from .._exceptions import NotFoundError

A, B, C, S, V = "a", "b", "c", "s", "v"
CLASSES = (A, B, C, S, V)


def _table() -> dict[str, tuple[str, str]]:
    from .. import _catalog
    # every operator carries its class and note in its definition (native_stubs/src/ops/**/*.toml)
    return {name: (op["fidelity"], op["note"]) for name, op in _catalog.operators().items()}


FIDELITY: dict[str, tuple[str, str]] = _table()


def fidelity(op: str) -> tuple[str, str] | None:
    """(class, note) of an emulated operator ("aclnnExp" or "Exp"), None if it has no entry."""
    return FIDELITY.get(op if op.startswith("aclnn") else "aclnn" + op)


def format_table() -> str:
    """The support table, one operator a line: name, class, family, note."""
    from .. import _catalog
    ops = _catalog.operators()
    width = max(len(op) for op in FIDELITY)
    fam = {name: ops[name]["family"] if name in ops else "-" for name in FIDELITY}
    fwidth = max(len(f) for f in fam.values())
    lines = [f"{'operator':<{width}}  class  {'family':<{fwidth}}  how",
             f"{'-' * width}  -----  {'-' * fwidth}  ---"]
    lines += [f"{op:<{width}}  ({cls})    {fam[op]:<{fwidth}}  {note}" for op, (cls, note) in sorted(FIDELITY.items())]
    return "\n".join(lines)


MARKDOWN_BEGIN = "<!-- support table: generated from the operator definitions by `python -m pyaclnn info --ops --markdown`; do not edit -->"
MARKDOWN_END = "<!-- end of the generated support table -->"


def format_markdown() -> str:
    """The support table as Markdown for docs/torch_npu.md: per family (the definitions' folder) its
    operators with their fidelity class, between the markers tests/test_support_table.py looks for."""
    from .. import _catalog
    families: dict[str, list[str]] = {}
    for name, op in sorted(_catalog.operators().items()):
        families.setdefault(op["family"], []).append(f"{name[len('aclnn'):]} ({op['fidelity']})")
    lines = [MARKDOWN_BEGIN, "",
             f"{sum(map(len, families.values()))} operators in {len(families)} families; the class after each name "
             "is its fidelity (a bit-exact, b the vendor's steps, c tolerance, s statistical, v validation only; "
             "`python -m pyaclnn info --ops NAME` gives its note, dtypes per SoC and checks).", "",
             "| family | operators |", "|---|---|"]
    lines += [f"| {fam} ({len(ops)}) | {', '.join(ops)} |" for fam, ops in sorted(families.items())]
    return "\n".join(lines + ["", MARKDOWN_END])


def describe(op: str) -> str:
    """Everything the catalog says of one operator: prototype, family, vendor source, fidelity, dtypes per SoC,
    and the checks phase 1 runs in order (``python -m pyaclnn info --ops aclnnRelu``)."""
    from .. import _catalog
    from ..signatures import builtin
    name = op if op.startswith("aclnn") else "aclnn" + op
    sig = builtin().get(name)
    entry = _catalog.operators().get(name)
    if sig is None:
        raise NotFoundError(f"{name} is not an operator of the emulator (python -m pyaclnn info --ops lists them)")
    params = ", ".join(f"{p.ctype} {p.name}" for p in sig.params)
    lines = [f"{name}GetWorkspaceSize({params})", f"  header     aclnnop/{sig.header}  (@domain {sig.domain})"]
    cls = fidelity(name)
    if cls:
        lines.append(f"  fidelity   ({cls[0]}) {cls[1]}")
    if entry:
        lines += [f"  family     {entry['family']}  ({entry['definition']})"]
        if entry.get("source"):
            lines.append(f"  follows    {entry['source']}")
        for param, socs in entry["dtypes"].items():
            if socs["A2"] == socs["950"]:
                lines.append(f"  dtypes     {param}: {' '.join(socs['950'])}")
            else:
                lines.append(f"  dtypes     {param}: Ascend950 {' '.join(socs['950']) or '-'}; "
                             f"Atlas A2/A3 {' '.join(socs['A2']) or '-'}")
        lines.append("  checks     " + "\n             ".join(entry["checks"]))
    return "\n".join(lines)
