"""The operators defined as data (native_stubs/src/ops/<family>/*.toml) against what existed before.

tests/data/op_signatures_before.json is the signature registry of the hand-written headers of the 149
operators as they were before they moved onto definitions (pyaclnn/signatures/_builtin.json of commit
e83265f). Every one of them must still be declared with exactly the same prototype (names, types,
kinds, roles, optionality), in the same header and with the same @domain: the move changed no ABI.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyaclnn import _catalog, signatures

BEFORE = json.loads((Path(__file__).parent / "data" / "op_signatures_before.json").read_text())["ops"]


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_prototype_unchanged(name):
    now = signatures.builtin().get(name)
    assert now is not None, f"{name} is no longer declared"
    before = dict(BEFORE[name])
    got = now.to_dict()
    # notes describe how a role was inferred from a header's style; the prototype is what counts
    for d in (before, got):
        d.pop("notes", None)
    assert got == before


def test_every_defined_operator_has_a_fidelity_class_and_note():
    ops = _catalog.operators()
    bad = {n: (o["fidelity"], o["note"]) for n, o in ops.items() if o["fidelity"] not in "abcsv" or not o["note"]}
    assert bad == {}
