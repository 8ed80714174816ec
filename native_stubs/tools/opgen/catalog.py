"""ops.json: what the Python package learns about the emulated operators (installed as pyaclnn/_stub/ops.json).

    {"format": 1,
     "signatures": <the signature registry of every shipped aclnnop header, pyaclnn/signatures' format>,
     "operators": {"aclnnRelu": {"family", "definition", "source", "doc", "fidelity", "note",
                                 "dtypes": {param: {"other"|"A2"|"950": [dtype, ...]}},
                                 "checks": [...], "kernel", "header"}}}

Read by pyaclnn.signatures (the builtin registry), pyaclnn.capi (the operators' C functions),
pyaclnn.ops._fidelity and `python -m pyaclnn info --ops` (the support table).
"""
from __future__ import annotations

import json

from .model import Family
from .resolve import dtype_tables

FORMAT = 1


def catalog(families: list[Family], declared: dict | None = None) -> str:
    """`declared`: signatures of the hand-written headers shipped beside the generated ones."""
    sigs, ops = dict(declared or {}), {}
    for fam in families:
        for op in fam.ops:
            sigs[op.launch] = op.signature
            ops[op.launch] = {
                "family": fam.name, "definition": op.file, "header": op.header, "source": op.source,
                "doc": op.doc, "fidelity": op.fidelity, "note": op.note, "kernel": op.kernel,
                "dtypes": dtype_tables(op), "checks": op.checks,
            }
    doc = {"format": FORMAT,
           "signatures": {"format": 1, "source": "native_stubs/src/ops", "ops": dict(sorted(sigs.items()))},
           "operators": dict(sorted(ops.items()))}
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"
