"""The references under tests/reference/ never ask the code under test.

A reference that imports pyaclnn (directly, lazily inside a function, or through importlib / __import__
with a string) would make the tests compare the package with itself. This scans the source of every
reference module with ast, so an import hidden behind try/except or inside a function is found too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REFERENCE_DIR = Path(__file__).parent / "reference"
FORBIDDEN = "pyaclnn"


def _is_forbidden(module: str | None) -> bool:
    return module is not None and (module == FORBIDDEN or module.startswith(FORBIDDEN + "."))


def forbidden_imports(source: str, filename: str = "<string>") -> list[tuple[int, str]]:
    """(line, what) for every import of pyaclnn in `source`: import statements, from-imports,
    and calls of importlib.import_module / __import__ / importlib.util.find_spec whose string
    argument names it."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if _is_forbidden(a.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and _is_forbidden(node.module):
                found.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__", "find_spec", "load_module"):
                for arg in node.args[:1]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                            and _is_forbidden(arg.value):
                        found.append((node.lineno, f"{name}({arg.value!r})"))
    return found


def reference_files() -> list[Path]:
    return sorted(REFERENCE_DIR.glob("*.py"))


def test_reference_directory_is_scanned():
    names = {p.name for p in reference_files()}
    assert {"formats.py", "arnq_casts.py", "grouped_dynamic_mx_quant.py"} <= names


@pytest.mark.parametrize("path", reference_files(), ids=lambda p: p.name)
def test_reference_module_does_not_import_pyaclnn(path):
    hits = forbidden_imports(path.read_text(), str(path))
    assert not hits, f"{path.name} imports the package under test: {hits}"


@pytest.mark.parametrize("source", [
    "import pyaclnn",
    "import numpy, pyaclnn.codecs as c",
    "from pyaclnn import codecs",
    "from pyaclnn.ops import _marshal",
    "def f():\n    try:\n        from pyaclnn import codecs\n    except ImportError:\n        pass",
    "import importlib\nm = importlib.import_module('pyaclnn.codecs')",
    "from importlib import import_module\nm = import_module('pyaclnn')",
    "m = __import__('pyaclnn')",
])
def test_scanner_finds_every_form_of_import(source):
    assert forbidden_imports(source)


@pytest.mark.parametrize("source", [
    "import numpy", "from . import formats", "import pyaclnn_other", "x = 'pyaclnn'",
    "from .pyaclnn import x",
])
def test_scanner_ignores_other_modules(source):
    assert not forbidden_imports(source)
