"""Tests of a peer's suite that fail on any device by their own fault (shipped list, with the reason for each).

op-plugin's tests are written for real NPUs and CANN releases; some fail before or after the operator runs,
wherever they run: a torch CPU function that does not exist for the dtype they use, a name never defined, a
reference of the wrong shape, an attribute their torch_npu release lacks, a behaviour of a newer CANN asserted
without checking the CANN version (the emulator reports no CANN release). The runner counts such a failure as
``upstream`` instead of ``failed`` when the list names the test and the failure's text holds the list's
``error`` for it (a listed test that fails another way still fails), so a file can be all green apart from
them and join the baseline, and a later regression in its other tests fails the check. Each entry says
``why`` it fails on any device; a listed test that passes is simply passed, and the run names it, so the list
can shrink."""
from __future__ import annotations

import json
from pathlib import Path

DEFAULT = Path(__file__).with_name("op_plugin_upstream_faults.json")


def load(path: Path | None, suite: str) -> dict[str, dict]:
    """node id (``test_x.py::TestX::test_y``) -> ``{"why": ..., "error": ...}`` for `suite`
    (``test/test_custom_ops``); empty without a file."""
    if path is None or not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return dict(doc.get("suites", {}).get(suite, {}).get("faults", {}))
