"""``python -m pyaclnn info`` / ``demo`` on the stub (in subprocesses)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import run_module
from pyaclnn import __version__, _loader

STUB = {"PYACLNN_BACKEND": "stub"}


def test_info_json_names_the_stub_and_its_libraries():
    rc, out, err = run_module(["pyaclnn", "info", "--json"], STUB)
    assert rc == 0, err
    info = json.loads(out)
    libdir = _loader.stub_library_dir()
    assert info["backend"] == "stub" and info["toolkit_root"] is None
    assert info["libraries"] == [str(Path(libdir) / n) for n in
                                 ("libascendcl.so", "libnnopbase.so", "libopapi.so")]
    assert info["pyaclnn_version"] == __version__
    assert info["acl_version"] == "1.17.0"
    assert info["soc"].startswith("Ascend")
    assert info["device_count"] >= 1
    assert info["init_error"] is None
    assert info["operators"]["aclnnAmpUpdateScale"] == str(Path(libdir) / "libopapi.so")
    # the matmul engine in use: OpenBLAS when the build copied it next to libopapi, else the portable loop
    blas = (Path(libdir) / "libscipy_openblas.so").exists()
    assert info["matmul_engine"].startswith("BLAS: OpenBLAS" if blas else "portable blocked loop ("), info


def test_info_text():
    rc, out, err = run_module(["pyaclnn", "info"], STUB)
    assert rc == 0, err
    assert re.search(r"^backend\s+stub$", out, re.M)
    assert "libascendcl.so" in out and "ACL version   1.17.0" in out
    from pyaclnn import _catalog
    n = len(_catalog.load()["operators"])
    assert re.search(rf"^operators\s+{n} emulated, in \d+ families \(python -m pyaclnn info --ops", out, re.M)
    assert re.search(r"^matmul\s+(BLAS: OpenBLAS \S+ .*\(scipy-openblas32\), one thread per call|portable blocked loop \(.+\))", out, re.M), out


def test_demo_runs_amp_update_scale_sample_and_variants():
    rc, out, err = run_module(["pyaclnn", "demo"], STUB)
    assert rc == 0, out + err
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ")}
    # Values from the vendor sample's walk-through (seed 000): 901 != 1000 keeps the scale;
    # tracker 999 grows it x2.0; foundInf backs off x0.5; both reset the tracker.
    assert "updatedScale 65536, updatedGrowthTracker 901" in lines["sample"]
    assert "updatedScale 131072, updatedGrowthTracker 0" in lines["growth"]
    assert "updatedScale 32768, updatedGrowthTracker 0" in lines["found_inf"]


def test_cli_reports_backend_errors_cleanly(tmp_path):
    rc, out, err = run_module(["pyaclnn", "info"],
                              {"PYACLNN_BACKEND": "cann", "ASCEND_HOME_PATH": str(tmp_path),
                               "ASCEND_TOOLKIT_HOME": None})
    assert rc == 2
    assert err.startswith("pyaclnn:") and "Traceback" not in err


def _demo_section(out: str, title: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index(title) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def test_demo_runs_every_emulated_operator_with_the_published_values():
    rc, out, err = run_module(["pyaclnn", "demo"], {**STUB, "PYACLNN_STUB_SOC": "Ascend950PR"})
    assert rc == 0, out + err
    # Spec B.15: y1 = y2 = 127 everywhere; scale 0.017716527 (V1), 0.03543306 (V2 with beta 1.5).
    v1, v2 = _demo_section(out, "aclnnAddRmsNormDynamicQuant")
    assert v1.count("127") == 16 and "scale1 [0.0177165269851684" in v1 and "scale2 [0.0177165269851684" in v1
    assert v2.count("127") == 16 and "scale1 [0.0354330614209175" in v2
    # Spec §7.1: y bytes (0, 72, 96, 120) twice, mxscale [[128, 0]], [[128, 0]], for both API versions.
    for line in _demo_section(out, "aclnnGroupedDynamicMxQuant"):
        assert "y bytes [0, 72, 96, 120, 0, 72, 96, 120], mxscale [[[128, 0]], [[128, 0]]]" in line


SEED_FAMILIES = {"amp_update_scale": "aclnnAmpUpdateScale", "add_rms_norm_dynamic_quant": "aclnnAddRmsNormDynamicQuant",
                 "grouped_dynamic_mx_quant": "aclnnGroupedDynamicMxQuant"}


def test_demo_runs_one_operator_of_every_family():
    from pyaclnn import _catalog
    families = {op["family"] for op in _catalog.load()["operators"].values()}
    rc, out, err = run_module(["pyaclnn", "demo"], STUB)
    assert rc == 0 and "FAILED" not in out, out + err
    lines = out.splitlines()
    for family in sorted(families):
        if family in SEED_FAMILIES:
            assert SEED_FAMILIES[family] in lines, family
        else:
            assert any(ln.split()[0] == family for ln in lines if ln.strip()), f"no demo of family {family}"
    assert f"{len(families)} families" in lines[0] and "info --ops" in lines[0]
    by_family = {ln.split()[0]: ln for ln in lines if ln and not ln.startswith(" ")}
    # hand-computed: [[1, 2], [3, 4]]^2; row sums; the first AdamW step moves each weight by lr * sign(grad)
    # after the decay 1 - lr * wd (bias-corrected m / sqrt(v) is sign(grad) on step 1)
    assert "[[ 7., 10.], [15., 22.]]" in by_family["matmul"]
    assert "-> [ 6., 15.]" in by_family["reduce"]
    assert "-> [0.899, 1.099, 0.899]" in by_family["optim"]
    assert "indices [1, 2, 0]" in by_family["sort"] and "-> False" in by_family["compare"]
    assert "-> [-3., -4.,  1.,  2.]" in by_family["posembedding"]      # x cos + rotate_half(x) sin


def test_demo_on_the_a2_family_skips_the_950_only_operator():
    rc, out, err = run_module(["pyaclnn", "demo"], {**STUB, "PYACLNN_STUB_SOC": "Ascend910B4"})
    assert rc == 0, out + err
    assert _demo_section(out, "aclnnAddRmsNormDynamicQuant")[0].count("127") == 16
    (line,) = _demo_section(out, "aclnnGroupedDynamicMxQuant")
    assert "not run" in line and "Ascend910B4" in line


def test_info_reports_live_objects_of_the_stub():
    rc, out, err = run_module(["pyaclnn", "info", "--json"], STUB)
    assert rc == 0, err
    live = json.loads(out)["live_objects"]
    assert live["executors"] == 0 and live["device_allocations"] == 0 and "tensors" in live


def test_a_reader_that_goes_away_stops_the_command_quietly():
    """`python -m pyaclnn info --ops | head -1`: no traceback, the shell's SIGPIPE status (the table is
    larger than a pipe's buffer, so the writer meets the closed pipe)."""
    import subprocess
    import sys
    from helpers import subprocess_env
    proc = subprocess.Popen([sys.executable, "-m", "pyaclnn", "info", "--ops"], env=subprocess_env(STUB),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    proc.stdout.readline()
    proc.stdout.close()                       # the reader goes away after one line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
