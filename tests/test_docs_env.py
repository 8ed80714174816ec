"""Every PYACLNN_* environment variable the package or its emulator reads is in README.md's one table
("Environment variables", with its default), and every variable of that table is still read somewhere."""
from __future__ import annotations

import re

from helpers import REPO_ROOT

# A quoted variable name in the sources: what getenv / os.environ are given (header guards are not quoted).
_NAME = re.compile(r'"(PYACLNN_[A-Z0-9_]+)')
_ROW = re.compile(r"^\| `(PYACLNN_[A-Z0-9_]+)` \| ([^|]+) \|", re.M)


def _read_by_the_code() -> set[str]:
    names = set()
    for pattern in ("pyaclnn/**/*.py", "native_stubs/src/**/*.c", "native_stubs/src/**/*.h", "packaging/*"):
        for path in REPO_ROOT.glob(pattern):
            names |= set(_NAME.findall(path.read_text(errors="replace")))
    return names


def _documented() -> dict[str, str]:
    text = (REPO_ROOT / "README.md").read_text()
    section = text[text.index("## Environment variables"):]
    section = section[:section.index("\n## ", 1)]
    return {name: default.strip() for name, default in _ROW.findall(section)}


def test_every_variable_read_is_in_the_readme_table_with_a_default():
    read, documented = _read_by_the_code(), _documented()
    assert len(read) > 20, read   # the scan itself works
    assert read - documented.keys() == set(), "read by the code but missing from README's table"
    assert all(documented.values()), documented


def test_every_variable_in_the_table_is_still_read():
    assert _documented().keys() - _read_by_the_code() == set(), "documented but no longer read anywhere"
