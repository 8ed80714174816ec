"""Generate everything an operator's definition implies (run by CMake; standard library only).

    python -m opgen --ops native_stubs/src/ops --signatures pyaclnn/signatures --out <build>/gen
                    [--static-include native_stubs/include]

Writes, under --out (a file is rewritten only when its text changes, so builds stay incremental):
    ops_decls.h               declarations of every step, kernel and spec function the definitions name
    ops_defs.c                every operator's op_def table and its two exported functions
    include/aclnnop/*.h       the public headers (installed beside the hand-written ones)
    ops.json                  the catalog the Python package reads: the signatures of every shipped aclnnop
                              header (generated or hand-written), and per defined operator its family,
                              fidelity class and note, dtype lists per SoC
With --capi-check DIR (pyaclnn/capi), it also generates pyaclnn.capi's _functions.py, _constants.py and
_enums.py from the whole public header tree (--static-include plus the generated headers) with
pyaclnn/signatures/capi_mirror.py and stops the build when the checked-in copies in DIR differ.
A definition error stops the build with one line naming the file, the operator and what is wrong.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

if __package__ in (None, ""):             # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "opgen"

from .c_code import decls_header, defs_source  # noqa: E402
from .catalog import catalog  # noqa: E402
from .load import load_all  # noqa: E402
from .model import DefinitionError  # noqa: E402
from .resolve import load_signatures, resolve  # noqa: E402


def _write(path: Path, text: str) -> None:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _check_capi(sig, static_include: Path, out: Path, capi_dir: Path) -> int:
    """The capi tables are checked in (a checkout without a build imports them); the build holds them to the
    headers. Fresh ones are written to <out>/capi/ for copying over stale ones."""
    mirror = importlib.import_module(sig.__name__ + ".capi_mirror")
    reader = importlib.import_module(sig.__name__ + ".declarations")
    try:
        tables = mirror.generate(reader.read_tree(static_include, out / "include"))
    except ValueError as exc:
        print(f"opgen: error: pyaclnn.capi from the headers: {exc}", file=sys.stderr)
        return 1
    for name, text in tables.items():
        _write(out / "capi" / name, text)
    stale = [n for n, text in tables.items()
             if not (capi_dir / n).is_file() or (capi_dir / n).read_text(encoding="utf-8") != text]
    if stale:
        print(f"opgen: error: {', '.join(stale)} of {capi_dir.resolve()} differ from what the headers declare; "
              f"the generated ones are in {out / 'capi'} (copy them over, or run python -m pyaclnn.signatures capi "
              "after a build)", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="opgen", description=__doc__.splitlines()[0])
    ap.add_argument("--ops", required=True, type=Path, help="native_stubs/src/ops")
    ap.add_argument("--signatures", required=True, type=Path, help="pyaclnn/signatures (the header parser)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--static-include", type=Path, help="the hand-written headers (a generated header may not be one)")
    ap.add_argument("--capi-check", type=Path,
                    help="pyaclnn/capi: fail when its tables differ from the headers' (needs --static-include)")
    args = ap.parse_args(argv)
    if args.capi_check and not args.static_include:
        ap.error("--capi-check needs --static-include")
    try:
        families = load_all(args.ops)
        sig = load_signatures(args.signatures)
        texts = resolve(families, sig)
        declared = {}
        if args.static_include:
            declared = {name: s.to_dict() for name, s in sig.parse_dir(args.static_include / "aclnnop").items()}
            clash = sorted(h for h in texts if (args.static_include / "aclnnop" / h).exists())
            if clash:
                raise DefinitionError(f"generated headers also exist in {args.static_include}/aclnnop: "
                                      f"{', '.join(clash)} (delete the hand-written copies)")
    except DefinitionError as exc:
        print(f"opgen: error: {exc}", file=sys.stderr)
        return 1
    out = args.out
    _write(out / "ops_decls.h", decls_header(families))
    _write(out / "ops_defs.c", defs_source(families, list(texts)))
    inc = out / "include" / "aclnnop"
    inc.mkdir(parents=True, exist_ok=True)
    for header, text in texts.items():
        _write(inc / header, text)
    for stale in inc.glob("*.h") if inc.exists() else ():
        if stale.name not in texts:
            stale.unlink()
    _write(out / "ops.json", catalog(families, declared))
    if args.capi_check:
        return _check_capi(sig, args.static_include, out, args.capi_check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
