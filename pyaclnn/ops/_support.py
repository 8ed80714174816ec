"""Support matrix (operator x dtype x SoC), probed by running each operator on tiny inputs.

Headers do not say which dtypes a chip accepts, so the matrix is measured: every operator that has a
*probe* (a function building the smallest valid call for a given dtype, registered next to its
friendly function) is launched once per dtype and the outcome recorded.  Operators of the registry
without a probe are listed as callable (exported or not) with no dtype column.

Other SoCs: on the emulator each SoC is probed in a subprocess (``PYACLNN_STUB_SOC`` is read once
per process); on real hardware only the chip present can be probed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Callable, Iterable, Sequence

from .._exceptions import ArgumentTypeError, BackendError
from ..errors import AclError

_probes: dict[str, tuple[tuple[str, ...], Callable]] = {}


def register_probe(op: str, dtypes: Sequence[str], build: Callable) -> None:
    """Register how to probe ``op``: ``build(acl_dtype, stream) -> args`` for each dtype name."""
    _probes[op] = (tuple(dtypes), build)


def probes() -> dict[str, tuple[tuple[str, ...], Callable]]:
    return dict(_probes)


def _probe_here(ops: Iterable[str] | None) -> list[dict[str, Any]]:
    from .. import dtypes as D
    from ..runtime import Stream, soc_name
    from ._launcher import function
    from ._registry import signatures

    soc = soc_name()
    rows: list[dict[str, Any]] = []
    wanted = sorted(signatures()) if ops is None else [function(o).name for o in ops]
    with Stream() as stream:
        for name in wanted:
            fn = function(name)
            available = fn.available
            probe = _probes.get(name)
            if probe is None or not available:
                rows.append({"op": name, "dtype": None, "soc": soc, "available": available,
                             "supported": None if available else False,
                             "status": "no probe" if available else "not exported"})
                continue
            dtype_names, build = probe
            for dname in dtype_names:
                row = {"op": name, "dtype": dname, "soc": soc, "available": True}
                try:
                    fn(*build(D.info(dname).acl, stream), stream=stream)
                    stream.synchronize()
                    row.update(supported=True, status="ACL_SUCCESS")
                except AclError as exc:
                    row.update(supported=False, status=exc.name)
                rows.append(row)
        stream.close()
    return rows


def support_matrix(ops: Iterable[str] | None = None, socs: Iterable[str] | None = None,
                   timeout: float = 120) -> list[dict[str, Any]]:
    """Rows ``{op, dtype, soc, available, supported, status}``, one per operator x dtype x SoC.

    ``ops``: operator names (default: the whole registry).  ``socs``: chips to report; default the
    current one.  On the emulator other SoCs are probed in subprocesses; on real hardware a SoC other
    than the present one is reported with ``supported=None`` ("not probed").
    """
    from ..runtime import is_stub, soc_name
    current = soc_name()
    socs = [current] if socs is None else list(socs)
    rows: list[dict[str, Any]] = []
    for soc in socs:
        if soc == current:
            rows += _probe_here(ops)
        elif is_stub():
            rows += _probe_in_subprocess(ops, soc, timeout)
        else:
            for r in _probe_here(ops):
                r.update(soc=soc, supported=None, status="not probed (needs that chip)")
                rows.append(r)
    return rows


def _probe_in_subprocess(ops: Iterable[str] | None, soc: str, timeout: float) -> list[dict[str, Any]]:
    from .._loader import backend
    env = dict(os.environ, PYACLNN_BACKEND="stub", PYACLNN_STUB_SOC=soc,
               PYACLNN_STUB_LIBDIR=backend().libdir)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    code = ("import json, sys; from pyaclnn.ops._support import _probe_here; "
            "print(json.dumps(_probe_here(json.loads(sys.argv[1]))))")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(None if ops is None else list(ops))],
                          env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        raise BackendError(f"probing {soc} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def support_matrix_markdown(rows: list[dict[str, Any]] | None = None, *, ops: Iterable[str] | None = None,
                            socs: Iterable[str] | None = None, timeout: float = 120) -> str:
    """A Markdown table: one line per operator x dtype, one column per SoC (``yes`` / status).

    ``rows`` from :func:`support_matrix`, or measured here with ``ops``, ``socs`` and ``timeout``
    (same meaning as there); giving both is an error.
    """
    if rows is None:
        rows = support_matrix(ops, socs, timeout)
    elif ops is not None or socs is not None:
        raise ArgumentTypeError("support_matrix_markdown() takes rows or ops/socs, not both")
    socs = list(dict.fromkeys(r["soc"] for r in rows))
    cells: dict[tuple, dict[str, str]] = {}
    for r in rows:
        key = (r["op"][len("aclnn"):], (r["dtype"] or "-").replace("ACL_", ""))
        if r["supported"] is True:
            text = "yes"
        elif r["supported"] is None:
            text = r["status"]
        else:
            text = f"no ({r['status']})"
        cells.setdefault(key, {})[r["soc"]] = text
    lines = ["| operator | dtype | " + " | ".join(socs) + " |",
             "|---|---|" + "---|" * len(socs)]
    for (op, dtype), by_soc in cells.items():
        lines.append(f"| {op} | {dtype} | " + " | ".join(by_soc.get(s, "") for s in socs) + " |")
    return "\n".join(lines)
