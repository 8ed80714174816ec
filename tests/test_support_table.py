"""docs/torch_npu.md's support table is the one the operator definitions give:
regenerate it with ``python tests/tools/support_table.py`` after adding an operator."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "tools"))
import support_table  # noqa: E402

from pyaclnn import _catalog  # noqa: E402
from pyaclnn.ops._fidelity import format_markdown  # noqa: E402


@pytest.fixture(scope="module")
def table() -> str:
    if not _catalog.operators():
        pytest.skip("no built stub: the catalog the table comes from is empty")
    return format_markdown()


def test_the_doc_holds_the_table_the_definitions_give(table):
    doc = support_table.DOC.read_text(encoding="utf-8")
    assert support_table.splice(doc, table) == doc, (
        "docs/torch_npu.md's support table differs from the operator definitions: "
        "run `python tests/tools/support_table.py` and commit the doc")


def test_the_table_names_every_operator_once_with_its_class(table):
    ops = _catalog.operators()
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and not ln.startswith("| family")]
    listed = [item for row in rows for item in row.split(" | ")[1].rstrip(" |").split(", ")]
    assert sorted(listed) == sorted(f"{n[5:]} ({op['fidelity']})" for n, op in ops.items())
    assert {row.split(" (")[0][2:] for row in rows} == {op["family"] for op in ops.values()}


def test_splice_refuses_a_doc_without_the_markers(table):
    with pytest.raises(ValueError, match="no generated support table"):
        support_table.splice("# a doc\n", table)
