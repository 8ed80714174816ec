"""A source checkout without a built stub, imported ahead of an installed pyaclnn (``python -m pyaclnn`` or
``python -c`` run inside a clone after a non-editable ``pip install .``, or test children with the clone on
PYTHONPATH), uses the installed package's stub; without one it says in one line what to do."""
from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

import pytest
from helpers import REPO_ROOT, run_python

# The child imports the copy: no editable-install redirect, the copy first on sys.path.
CHILD = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path.insert(0, sys.argv[1])
import pyaclnn
assert pyaclnn.__file__.startswith(sys.argv[1]), pyaclnn.__file__
try:
    print("LIBDIR", pyaclnn.get_library_dir())
except FileNotFoundError as exc:
    print("ERROR", exc)
"""


def _installed_stub_lib() -> Path | None:
    try:
        lib = Path(str(metadata.distribution("pyaclnn").locate_file("pyaclnn/_stub/lib")))
    except metadata.PackageNotFoundError:
        return None
    return lib if lib.is_dir() else None


def _checkout_copy(tmp_path: Path, version: str | None = None) -> Path:
    shutil.copytree(REPO_ROOT / "pyaclnn", tmp_path / "pyaclnn",
                    ignore=shutil.ignore_patterns("_stub", "__pycache__", "*.so"))
    if version:
        init = tmp_path / "pyaclnn" / "__init__.py"
        text = init.read_text()
        init.write_text(text.replace('__version__ = "', f'__version__ = "{version}+', 1))
    return tmp_path


def test_checkout_without_a_stub_uses_the_installed_one(tmp_path):
    lib = _installed_stub_lib()
    if lib is None:
        pytest.skip("pyaclnn is not installed with a built stub")
    rc, out, err = run_python(CHILD, {"PYACLNN_STUB_LIBDIR": None}, args=[str(_checkout_copy(tmp_path))])
    assert rc == 0, err
    assert f"LIBDIR {lib.resolve()}" in out, out


def test_without_a_matching_installed_stub_it_says_what_to_do(tmp_path):
    rc, out, err = run_python(CHILD, {"PYACLNN_STUB_LIBDIR": None},
                              args=[str(_checkout_copy(tmp_path, version="other"))])
    assert rc == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.startswith("ERROR")]
    assert "pip install -e ." in line and "PYACLNN_STUB_LIBDIR" in line
