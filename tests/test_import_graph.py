"""pyaclnn has no import circles, and every module imports on its own.

The graph is read from the source with :mod:`ast`: every ``import`` counts, at module level or inside
a function (a deferred import is still a dependency; deferring it only hides a circle until the
function runs), except those under ``if TYPE_CHECKING:``.  An import names the module it loads
(``from .capi import _constants`` -> ``pyaclnn.capi._constants``); the parent package's
``__init__`` that Python runs first is not counted, or every package that imports its own children
would be a circle.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "pyaclnn"


def _module_name(path: Path) -> str:
    parts = ("pyaclnn",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
           (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """Every Import/ImportFrom, skipping the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _targets(module: str, is_package: bool, node, known: set[str]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        # ``from pkg import name``: the submodule pkg.name if there is one, else pkg itself
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
    out = set()
    for name in names:
        while name and name not in known:       # ``import pyaclnn.x.y`` of a non-module attribute
            name = name.rpartition(".")[0]
        if name and name.startswith("pyaclnn"):
            out.add(name)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for node in _import_nodes(tree):
            edges |= _targets(name, path.name == "__init__.py", node, known)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_walker_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import x\n"
                     "def f():\n    from .y import z\n")
    known = {"pyaclnn", "pyaclnn.x", "pyaclnn.y", "pyaclnn.q"}
    edges = set().union(*(_targets("pyaclnn.q", False, n, known) for n in _import_nodes(tree)))
    assert edges == {"pyaclnn.y"}          # deferred imports count; TYPE_CHECKING ones do not


def test_the_walker_reads_the_real_package():
    graph = import_graph()
    assert "pyaclnn.runtime.streams" in graph["pyaclnn.runtime"]
    assert "pyaclnn.capi" in graph["pyaclnn.tensor"]


def test_no_import_circles():
    found = cycles(import_graph())
    assert not found, "import circles (each line one strongly connected set of modules):\n" + \
        "\n".join("  " + " <-> ".join(c) for c in found)


def test_the_device_tensor_knows_nothing_of_torch():
    # Host data (numpy, torch) is converted at one boundary (_boundary, torch): the tensor module reaches
    # neither torch module, even through an import inside a function.
    graph = import_graph()
    reach, todo = set(), ["pyaclnn.tensor"]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in reach:
                reach.add(nxt)
                todo.append(nxt)
    assert not reach & {"pyaclnn.torch", "pyaclnn._torch_out"}, sorted(reach)


# One fresh interpreter imports the third-party packages (slow to import; numpy is every module's
# dependency) and the package itself, then forks a child per pyaclnn module. Importing pyaclnn.x always
# runs pyaclnn/__init__ first, so a child that starts with only the package's own __init__ (and what it
# imports) loaded is in the state any import of pyaclnn.x starts from; loading it once in the parent
# instead of in every child is most of this test's time (measured: 75 s -> 11 s for 80 modules on a
# loaded machine).
_ISOLATED_IMPORTS = r"""
import os, sys, traceback
import numpy, ml_dtypes  # noqa: F401
if "pyaclnn.torch" in sys.argv:
    import torch  # noqa: F401
assert not [m for m in sys.modules if m.startswith("pyaclnn")]
import pyaclnn  # noqa: F401
failed = []
for name in sys.argv[1:]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            __import__(name)
            code = 0
        except BaseException:
            os.write(w, traceback.format_exc().encode())
            code = 1
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        text = f.read().decode()
    _, status = os.waitpid(pid, 0)
    if status:
        failed.append(f"{name}:\n{text}")
print("\n".join(failed))
sys.exit(1 if failed else 0)
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_every_module_imports_alone():
    names = sorted(m for m in _modules() if not m.endswith("__main__"))
    try:
        import torch  # noqa: F401
    except Exception:       # noqa: BLE001 -- torch absent (or unloadable): its module cannot import
        names.remove("pyaclnn.torch")
        names.remove("pyaclnn._torch_out")
    proc = subprocess.run([sys.executable, "-c", _ISOLATED_IMPORTS, *names], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
