"""Every ```python block of README.md runs as written, on its own, in a fresh interpreter on the
emulator -- so a stale README fails the suite.

What a block prints is checked where the README says it: a ``print(...)`` line ending in a
``# ...`` comment, or followed by a ``# ...`` line, states that line's output (all such lines of a
block, in order, must be the block's whole output), and the support-matrix block must print the Markdown table that follows it.
Blocks that import torch skip when torch is not installed.
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest
from helpers import REPO_ROOT, subprocess_env

README = REPO_ROOT / "README.md"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of each ```python block."""
    blocks, lines, start = [], text.splitlines(), None
    for i, line in enumerate(lines, 1):
        if start is None and line.strip() == "```python":
            start = i
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(lines[start:i - 1]) + "\n"))
            start = None
    assert start is None, f"README.md: ```python block at line {start} is not closed"
    return blocks


BLOCKS = python_blocks(README.read_text())


def stated_output(code: str) -> list[str] | None:
    """The outputs the block's print lines state (None: it states none): a print line's trailing
    ``# ...`` comment, or else a comment line right below it."""
    lines = code.splitlines()
    stated = []
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("print("):
            continue
        m = re.search(r"\)\s+#\s(.*)$", line)
        if m:
            stated.append(m.group(1).strip())
        elif i + 1 < len(lines) and lines[i + 1].lstrip().startswith("# "):
            stated.append(lines[i + 1].lstrip()[2:].strip())
    return stated or None


def table_after(start_line: int) -> str:
    """The first Markdown table after the given README line."""
    lines = README.read_text().splitlines()[start_line:]
    first = next(i for i, line in enumerate(lines) if line.startswith("| "))
    table = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return "\n".join(table)


def test_readme_has_the_blocks_this_test_expects():
    assert len(BLOCKS) >= 7
    assert all("import" in code for _, code in BLOCKS), "every block brings its own imports"


@pytest.mark.parametrize("start, code", BLOCKS, ids=[f"line{start}" for start, _ in BLOCKS])
def test_block_runs_standalone(start, code):
    if re.search(r"^import torch|^from torch|^\s*import torch", code, re.M):
        pytest.importorskip("torch", reason="the block needs torch (optional extra)")
    if "torch_npu" in code and importlib.util.find_spec("torch_npu") is None:
        # (found, not imported: torch_npu must not load into the test process)
        pytest.skip("the block needs torch-npu==2.13.0 (optional extra: pip install -e '.[torch-npu]')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=REPO_ROOT, env=subprocess_env({"PYACLNN_BACKEND": "stub"}))
    assert proc.returncode == 0, f"README.md block at line {start} failed:\n{proc.stderr}"
    printed = proc.stdout.rstrip("\n")
    if "support_matrix_markdown(" in code:
        assert printed == table_after(start), "the README's support table is not what the call prints"
        return
    stated = stated_output(code)
    if stated is not None:
        assert printed.splitlines() == stated, f"README.md block at line {start} prints something else"


def test_stated_output_parsing():
    assert stated_output('print(a, b)   # [1.] [0]\nx = 1  # not a print\n') == ["[1.] [0]"]
    assert stated_output("print(a)\n") is None
    assert stated_output("print(a)\n# [0, 1]\nprint(b)  # 2\n") == ["[0, 1]", "2"]
