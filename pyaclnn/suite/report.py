"""The runner's results as a table (per file, then totals and the operators that block the most files) and
as JSON."""
from __future__ import annotations

from collections import Counter

from .runner import FileResult


def totals(results: list[FileResult]) -> dict:
    tests = sum(r.passed + r.failed + r.errors for r in results)
    passed = sum(r.passed for r in results)
    return {"files": len(results), "green": sum(r.green for r in results),
            "upstream": sum(r.upstream for r in results),
            "partly": sum(not r.green and r.passed > 0 for r in results),
            "red": sum(not r.green and r.passed == 0 and (r.failed + r.errors > 0 or r.ended != "ok") for r in results),
            "skipped_only": sum(r.ended == "ok" and r.passed == r.failed == r.errors == 0 for r in results),
            "crashed_or_hung": sum(r.ended != "ok" for r in results),
            "tests": tests, "tests_passed": passed,
            "blockers": Counter(r.missing for r in results if r.missing and not r.green).most_common()}


def table(results: list[FileResult], soc: str) -> str:
    w = max([len(r.file) for r in results] + [4])
    lines = [f"{'file':<{w}}  {'pass':>5} {'fail':>5} {'err':>4} {'skip':>5} {'upst':>4}  {'ended':<14} "
             f"first missing operator",
             f"{'-' * w}  {'-' * 5} {'-' * 5} {'-' * 4} {'-' * 5} {'-' * 4}  {'-' * 14} {'-' * 22}"]
    for r in sorted(results, key=lambda r: r.file):
        lines.append(f"{r.file:<{w}}  {r.passed:>5} {r.failed:>5} {r.errors:>4} {r.skipped:>5} {r.upstream:>4}  "
                     f"{r.ended:<14} {r.missing or ''}")
    t = totals(results)
    pct = lambda a, b: f"{100 * a / b:.0f}%" if b else "-"          # noqa: E731
    lines += ["", f"{soc}: {t['files']} files: {t['green']} all green ({pct(t['green'], t['files'])}), "
              f"{t['partly']} partly, {t['red']} red, {t['skipped_only']} skipped only, {t['crashed_or_hung']} "
              f"crashed or hung; {t['tests_passed']} of {t['tests']} tests pass ({pct(t['tests_passed'], t['tests'])})"
              + (f"; {t['upstream']} more fail by their own fault (upst: the upstream-faults list)" if t["upstream"] else "")]
    if t["blockers"]:
        lines.append("blocking the most files: " + ", ".join(f"{op} {n}" for op, n in t["blockers"][:15]))
    return "\n".join(lines)


def as_json(results: list[FileResult], soc: str, commit: str | None) -> dict:
    return {"soc": soc, "commit": commit, "totals": totals(results), "files": [r.as_dict() for r in results]}
