"""How faithfully the CPU emulator reproduces each operator it implements: the support table of
``python -m pyaclnn info --ops``.

Classes (issue 15):
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
      variance, keep rate) on large draws -- never the NPU's values.
Each class is backed by tests against an independent reference (the test named in the note's
file: tests/test_elementwise_*.py, tests/test_<operator>.py).
"""
from __future__ import annotations

A, B, C, S = "a", "b", "c", "s"
CLASSES = (A, B, C, S)

# tolerance of the transcendental operators (tests/test_elementwise_pointwise.py measures it):
_TRANS = ("libm in float64, rounded once to fp32, then to fp16/bf16: <= 1 ulp of the float64 value "
          "rounded to the dtype; vs torch CPU <= 2 ulp fp32, <= 1 ulp fp16/bf16")

_FAMILIES: list[tuple[tuple[str, ...], str, str]] = [
    (("Add", "Adds", "InplaceAdd", "InplaceAdds", "Sub", "Subs", "InplaceSub", "InplaceSubs", "Rsub", "Rsubs"), B,
     "IEEE add/sub in the promoted dtype (a); alpha != 1 as the NPU's Axpy, Muls then Add in fp32 (b)"),
    (("Mul", "Muls", "InplaceMul", "InplaceMuls", "Div", "Divs", "InplaceDiv", "InplaceDivs", "DivMod", "DivMods",
      "InplaceDivMod", "InplaceDivMods"), A, "IEEE mul/div in the promoted dtype, integers wrap"),
    (("Cast", "InplaceCopy", "InplaceFillScalar", "InplaceOne", "InplaceZero"), A,
     "moves and the NPU's Cast rules (RNE, INF_NAN overflow, float->int truncates and saturates)"),
    (("Neg", "InplaceNeg", "Abs", "Ceil", "InplaceCeil"), A, "exact (no rounding)"),
    (("Sqrt", "InplaceSqrt", "Reciprocal", "InplaceReciprocal"), A,
     "IEEE correctly rounded sqrt and 1/x in fp32 (fp16/bf16 through fp32, one more RNE cast)"),
    (("Exp", "InplaceExp", "Rsqrt", "InplaceRsqrt", "Cos", "InplaceCos", "Sin", "InplaceSin"), C, _TRANS),
    (("PowTensorScalar", "InplacePowTensorScalar", "PowScalarTensor", "PowTensorTensor", "InplacePowTensorTensor"), C,
     "floats: " + _TRANS + "; x**2 and x**0.5 correctly rounded; integers exact with wrap (a)"),
    (("Addcmul", "InplaceAddcmul", "Addcdiv", "InplaceAddcdiv", "Lerps", "InplaceLerps"), C,
     "the kernel's steps each rounded to fp32 (fp16/bf16 upcast; DOUBLE in double), integers wrap; "
     "the step order is the emulator's (tests/test_addc_lerp.py)"),
    (("ForeachAddScalarV2", "ForeachAddcdivScalarList", "ForeachAddcmulScalarV2", "ForeachDivScalarList",
      "ForeachLerpScalar", "ForeachMulScalarV2", "ForeachSqrt"), C,
     "per tensor the single-tensor operator's arithmetic (Adds, Addcdiv, Addcmul, Divs, Lerps, Muls, Sqrt); "
     "FLOAT16/BF16 lists in fp32 (tests/test_foreach.py)"),
    (("EqTensor", "EqScalar", "NeTensor", "NeScalar", "GtTensor", "GtScalar", "GeTensor", "GeScalar", "LtTensor",
      "LtScalar", "LeTensor", "LeScalar", "InplaceEqTensor", "InplaceEqScalar", "InplaceNeTensor",
      "InplaceNeScalar", "InplaceGtTensor", "InplaceGtScalar", "InplaceGeTensor", "InplaceGeScalar",
      "InplaceLtTensor", "InplaceLtScalar", "InplaceLeTensor", "InplaceLeScalar", "IsFinite"), A,
     "compare in the promoted dtype (IEEE: NaN unequal), BOOL result"),
    (("BitwiseAndScalar", "InplaceBitwiseAndScalar", "BitwiseAndTensor", "InplaceBitwiseAndTensor"), A,
     "integer and / logical and"),
    (("SWhere", "InplaceMaskedFillScalar", "Triu", "InplaceTriu"), A, "moves (values cast to the out dtype)"),
    # reductions, softmax (docs/decoder_ops.md)
    (("Amax", "Max", "Min", "MaxDim", "MinDim", "ArgMax"), A,
     "compare and pick, first index on ties (tests/test_reduce.py)"),
    (("ReduceSum", "Mean", "Softmax", "SoftmaxBackward", "LogSoftmax", "LogSoftmaxBackward"), C,
     "within 1 ulp of the exactly rounded result; the NPU's bound n*2^-24*sum|x| (tests/test_reduce.py, "
     "tests/test_softmax.py)"),
    (("NLLLoss", "NLLLossBackward"), C,
     "fp32 products and quotients, fp32 sums in target order, one rounding to the output (tests/test_nll_loss.py)"),
    (("Cumsum",), C, "integers exact with wrap (a); floats: each prefix a float64 sum rounded once through fp32, "
     "within 1 ulp of the rounded float64 running sum (tests/test_cumsum_topk.py)"),
    (("Relu", "InplaceRelu", "ThresholdBackward"), A, "compare and move: NaN kept, relu(-0.0) = +0 (tests/test_relu.py)"),
    (("Topk",), A, "selection, data moved: NaN largest, ties in input order (tests/test_cumsum_topk.py)"),
    (("GeluV2", "GeluBackwardV2"), C, _TRANS + " (tests/test_gelu.py)"),
    (("LayerNorm", "LayerNormBackward"), C, "float64 sums and rstd, each result rounded once to fp32 then its "
     "dtype: within 1 ulp of the rounded float64 reference (tests/test_layer_norm.py)"),
]

def _table() -> dict[str, tuple[str, str]]:
    from .. import _catalog
    table = {"aclnn" + name: (cls, note) for names, cls, note in _FAMILIES for name in names}
    # the operators defined as data carry their class and note in their definition
    table.update({name: (op["fidelity"], op["note"]) for name, op in _catalog.operators().items()})
    return table


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


def describe(op: str) -> str:
    """Everything the catalog says of one operator: prototype, family, vendor source, fidelity, dtypes per SoC,
    and the checks phase 1 runs in order (``python -m pyaclnn info --ops aclnnRelu``)."""
    from .. import _catalog
    from ..signatures import builtin
    name = op if op.startswith("aclnn") else "aclnn" + op
    sig = builtin().get(name)
    entry = _catalog.operators().get(name)
    if sig is None:
        raise KeyError(f"{name} is not an operator of the emulator (python -m pyaclnn info --ops lists them)")
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
