"""The mutation check's list stays valid as the code changes (the check itself: tests/mutation/).

Each mutant's snippet must still occur exactly once, so an edit that moves or rewrites the mutated
line shows up in the ordinary suite instead of in the CI mutation run; every operator family folder
and the runtime and Python layers keep at least one mutant.
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "mutation"))

from mutants import MUTANTS  # noqa: E402
from run_mutants import check_snippets  # noqa: E402


def test_every_snippet_occurs_exactly_once_and_names_existing_tests():
    assert check_snippets(MUTANTS, REPO) == []


def test_at_least_25_mutants_with_tests():
    assert len(MUTANTS) >= 25
    assert all(m.tests for m in MUTANTS)


def test_every_operator_family_and_layer_has_mutants():
    files = [m.file for m in MUTANTS]
    families = sorted(p.name for p in (REPO / "native_stubs" / "src" / "ops").iterdir()
                      if p.is_dir() and p.name != "common")
    missing = [f for f in families if not any(f"/ops/{f}/" in path for path in files)]
    assert not missing, f"operator families without a mutant (add some to tests/mutation/mutants.py): {missing}"
    for layer in ("native_stubs/src/numerics/", "native_stubs/src/runtime/", "native_stubs/src/kernels/",
                  "native_stubs/src/opbase/", "pyaclnn/"):
        assert any(path.startswith(layer) for path in files), layer
