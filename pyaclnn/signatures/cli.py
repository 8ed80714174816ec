"""``gen-signatures DIR [-o FILE]``: parse a directory of aclnn headers into a registry JSON file."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Sequence

from .model import OpSignature, registry_to_dict
from .parser import first_per_name, header_files, scan_dir


# An innermost JSON object (a parameter): printed on one line so the file reads like the prototype.
_INNER_OBJECT = re.compile(r"\{\n[^{}\[\]]*?\}")


def render(ops: dict[str, OpSignature], source: str) -> str:
    """The registry file's text: stable (sorted, fixed layout) so that it diffs and compares."""
    text = json.dumps(registry_to_dict(ops, source), indent=2, ensure_ascii=False)
    return _INNER_OBJECT.sub(lambda m: re.sub(r"\n\s*", " ", m.group(0)), text) + "\n"


def summary(directory: Path, sigs: list[OpSignature]) -> str:
    ops = {s.name for s in sigs}
    lines = [
        f"headers:                 {len(header_files(directory))}",
        f"headers with prototypes: {len({s.header for s in sigs})}",
        f"GetWorkspaceSize found:  {len(sigs)} ({len(ops)} distinct operators)",
        f"fully classified:        {sum(s.fully_classified for s in sigs)}",
        f"with phase 2:            {sum(s.has_launch for s in sigs)}",
        f"with notes:              {sum(bool(s.notes) for s in sigs)}",
    ]
    lines += [f"  {s.name} ({s.header}): {note}" for s in sigs for note in s.notes]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="pyaclnn gen-signatures",
        description="Parse aclnnop/*.h headers into a signature registry (JSON).")
    p.add_argument("directory", type=Path, help="a directory of operator headers, e.g. <toolkit>/include/aclnnop")
    p.add_argument("-o", "--output", type=Path, help="write the registry here (default: standard output)")
    p.add_argument("--check", action="store_true",
                   help="do not write; exit with status 1 if OUTPUT differs from a fresh parse")
    p.add_argument("--summary", action="store_true",
                   help="print counts (headers, prototypes, fully classified) and every note to stderr")
    args = p.parse_args(argv)
    if not args.directory.is_dir():
        p.error(f"not a directory: {args.directory}")
    if args.check and not args.output:
        p.error("--check needs -o FILE")

    sigs = scan_dir(args.directory)
    ops = first_per_name(sigs)
    text = render(ops, args.directory.as_posix())
    if args.summary:
        print(summary(args.directory, sigs), file=sys.stderr)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: regenerate it with gen-signatures {args.directory} -o {args.output}",
                  file=sys.stderr)
            return 1
        return 0
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"{len(ops)} operators -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
