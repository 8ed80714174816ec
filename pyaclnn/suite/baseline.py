"""The ratchet: a baseline of the files that are all green, per SoC, at a recorded op-plugin commit. The check
fails when a file of the baseline is no longer green; new green files are reported so that the baseline can
grow (--write-baseline)."""
from __future__ import annotations

import json
from pathlib import Path

from .runner import FileResult

DEFAULT = Path(__file__).with_name("op_plugin_baseline.json")


def load(path: Path) -> dict:
    if not path.is_file():
        return {"format": 1, "suites": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def key(suite_dir: Path) -> str:
    """The suite's name in the baseline: its directory under the checkout (test/test_base_ops)."""
    parts = suite_dir.resolve().parts
    return "/".join(parts[-2:])


def check(doc: dict, suite: str, soc: str, commit: str | None, results: list[FileResult]) -> tuple[list[str], list[str], str]:
    """(files of the baseline that are not green now, green files the baseline lacks, a note on the commit)."""
    entry = doc.get("suites", {}).get(suite, {})
    want = set(entry.get("green", {}).get(soc, []))
    ran = {r.file: r for r in results}
    lost = sorted(f for f in want if f in ran and not ran[f].green)
    gained = sorted(r.file for r in results if r.green and r.file not in want)
    note = ""
    if entry.get("commit") and commit and entry["commit"] != commit:
        note = f"the baseline was recorded at op-plugin {entry['commit'][:12]}, this checkout is {commit[:12]}"
    return lost, gained, note


def update(doc: dict, suite: str, soc: str, commit: str | None, results: list[FileResult]) -> dict:
    """The baseline with this SoC's green files of `suite` replaced by the run's (files not run are kept)."""
    suites = doc.setdefault("suites", {})
    entry = suites.setdefault(suite, {"commit": commit, "green": {}})
    if commit:
        entry["commit"] = commit
    ran = {r.file for r in results}
    kept = [f for f in entry["green"].get(soc, []) if f not in ran]
    entry["green"][soc] = sorted(kept + [r.file for r in results if r.green])
    return doc


def write(doc: dict, path: Path) -> None:
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
