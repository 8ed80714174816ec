"""Write the support table of docs/torch_npu.md from the operator definitions (through the built stub's
catalog): ``python tests/tools/support_table.py``. tests/test_support_table.py checks that the doc holds
what this would write."""
from __future__ import annotations

import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "torch_npu.md"


def splice(doc: str, table: str) -> str:
    """The doc with the text between the table's first and last lines (the markers) replaced by `table`."""
    begin, end = table.splitlines()[0], table.splitlines()[-1]
    head, sep, rest = doc.partition(begin)
    if not sep or end not in rest:
        raise ValueError(f"{DOC.name} has no generated support table (the markers {begin!r} ... {end!r})")
    return head + table + rest.partition(end)[2]


def main() -> int:
    from pyaclnn import _catalog
    from pyaclnn.ops._fidelity import format_markdown
    if not _catalog.operators():
        print("support_table: no built stub catalog (pip install -e . builds it)", file=sys.stderr)
        return 1
    DOC.write_text(splice(DOC.read_text(encoding="utf-8"), format_markdown()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
