"""The emulator's stream-hazard checker (docs/hazards.md).

tests/c/hazards.c holds one deliberate ordering bug per kind and the same program correctly ordered
(a synchronisation, or aclrtRecordEvent + aclrtStreamWaitEvent). Each bug must be reported exactly
once with its kind's name, the ordered variants never, and with the checker off nothing is printed.
In error mode the offending call fails with the documented code and leaves the finding in
aclGetRecentErrMsg. These runs set their own PYACLNN_STUB_HAZARDS, whatever the suite runs with.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, run_python, subprocess_env

import pyaclnn

SOURCE = REPO_ROOT / "tests" / "c" / "hazards.c"
# the HCCL ports (hccl_*.cpp) link libhccl and start an interpreter of their own: tests/test_hccl.py runs them
EXAMPLES = sorted(p for p in (REPO_ROOT / "examples" / "cpp").glob("*.cpp") if not p.name.startswith("hccl_"))
LINE = re.compile(r"^pyaclnn-stub hazard: ([a-z-]+): ", re.M)

# mode of hazards.c -> (kind, refusal code of the offending call in error mode, ordered variants)
CASES = {
    "read_before_sync": ("read-before-sync", 507004, ["sync", "event", "query"]),
    "free_in_flight": ("free-in-flight", 507004, ["sync", "event", "query"]),
    "cross_stream": ("cross-stream", 507004, ["sync", "event"]),
    "cross_stream_op": ("cross-stream", 361001, ["sync", "event"]),   # an aclnn launch: 361001 over 507004
    "bad_workspace": ("bad-workspace", 361001, ["sync"]),            # refused even with the checker off
    "uninitialized_read": ("uninitialized-read", 361001, ["sync"]),  # 507053 below the aclnn launch
}


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, SOURCE)


def run(exe, mode: str, variant: str, hazards: str) -> tuple[int, list[str], str]:
    env = subprocess_env({"PYACLNN_STUB_HAZARDS": hazards, "PYACLNN_STUB_POISON": "1",
                          "ASAN_OPTIONS": "detect_leaks=0"})
    done = subprocess.run([str(exe), mode, variant], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    status = int(re.search(r"^status (-?\d+)$", done.stdout, re.M).group(1))
    return status, LINE.findall(done.stderr), done.stdout + done.stderr


@pytest.mark.parametrize("mode", CASES)
def test_each_bug_is_reported_once_with_its_kind(driver, mode):
    kind, _, _ = CASES[mode]
    status, kinds, out = run(driver, mode, "bug", "report")
    assert kinds == [kind], out
    assert f"findings 1 {kind}\n" in out, out   # pyaclnn_stub_hazards has it too
    if mode != "bad_workspace":
        assert status == 0, out                  # report mode only reports


@pytest.mark.parametrize("mode,variant", [(m, v) for m, (_, _, vs) in CASES.items() for v in vs])
def test_the_correctly_ordered_program_reports_nothing(driver, mode, variant):
    status, kinds, out = run(driver, mode, variant, "error")
    assert kinds == [] and status == 0 and "findings 0\n" in out, out


@pytest.mark.parametrize("mode", CASES)
def test_with_the_checker_off_nothing_is_printed(driver, mode):
    for variant in ["bug", *CASES[mode][2]]:
        env = subprocess_env({"PYACLNN_STUB_HAZARDS": "off", "PYACLNN_STUB_POISON": "1"})
        done = subprocess.run([str(driver), mode, variant], capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert "findings 0\n" in done.stdout


@pytest.mark.parametrize("mode", CASES)
def test_error_mode_fails_the_offending_call_with_the_documented_code(driver, mode):
    kind, code, _ = CASES[mode]
    status, kinds, out = run(driver, mode, "bug", "error")
    assert kinds == [kind] and status == code, out
    if mode != "bad_workspace":                # the other refusals carry the finding in their message
        assert f"hazard {kind}: " in out, out


def test_report_line_names_call_streams_range_and_the_task_that_holds_the_bytes(driver):
    _, _, out = run(driver, "cross_stream_op", "bug", "report")
    line = next(ln for ln in out.splitlines() if ln.startswith("pyaclnn-stub hazard:"))
    assert re.search(r"cross-stream: aclnnInplaceCopy \(InplaceCopy\) on stream 0x[0-9a-f]+ reads bytes "
                     r"\[0x[0-9a-f]+, 0x[0-9a-f]+\) .*which InplaceZero on stream 0x[0-9a-f]+ writes "
                     r"\(queued by aclnnInplaceZero as task \d+ of that stream\)", line), line


def test_poison_fills_fresh_device_memory_with_nan():
    code, out, err = run_python("""
        import pyaclnn, numpy as np
        t = pyaclnn.empty((4,), "float32")
        h = pyaclnn.empty((2,), "float16")
        print(np.isnan(t.numpy()).all(), np.isnan(h.numpy().astype(np.float32)).all())
    """, env_overrides={"PYACLNN_STUB_POISON": "1"})
    assert code == 0, err
    assert out.split() == ["True", "True"]


PY_BUG = """
    import ctypes, pyaclnn
    from pyaclnn import capi
    s = pyaclnn.Stream()
    t = pyaclnn.empty((64,), "float32", stream=s)
    status = capi.aclrtMemsetAsync(t.data_ptr, 256, 0, 256, s.handle)
    host = (ctypes.c_char * 256)()
    status = capi.aclrtMemcpy(host, 256, t.data_ptr, 256, capi.ACL_MEMCPY_DEVICE_TO_HOST)   # no sync: a bug
    found = pyaclnn.hazards()
    print(status, len(found), found[0].kind, found[0].api, found[0].op, found[0].queued_by,
          found[0].stream is None, found[0].other_stream == s.handle,
          found[0].range == (t.data_ptr, t.data_ptr + 256))
    print(len(pyaclnn.hazards(clear=True)), len(pyaclnn.hazards()), pyaclnn.hazard_counts()["read-before-sync"])
    s.synchronize()
"""


def test_python_hazards_lists_the_findings_and_clears_them():
    code, out, err = run_python(PY_BUG, env_overrides={"PYACLNN_STUB_HAZARDS": "report"})
    assert code == 0, err
    first, second = out.splitlines()
    assert first == "0 1 read-before-sync aclrtMemcpy host ('memset', 'aclrtMemsetAsync') True True True", out
    assert second == "1 0 0"
    assert err.count("pyaclnn-stub hazard: read-before-sync: aclrtMemcpy on the host reads bytes") == 1, err


def test_python_error_mode_refuses_the_call_with_507004():
    code, out, err = run_python(PY_BUG, env_overrides={"PYACLNN_STUB_HAZARDS": "error"})
    assert code == 0, err
    assert out.splitlines()[0].startswith("507004 1 read-before-sync"), out


def test_pythonic_layer_synchronises_and_reuses_pools_without_a_report():
    code, out, err = run_python("""
        import numpy as np, pyaclnn
        from pyaclnn import ops
        a, b = pyaclnn.Stream(), pyaclnn.Stream()
        for i in range(20):                      # pooled blocks recycled on each stream
            x = pyaclnn.from_numpy(np.arange(64, dtype=np.float32), stream=a)
            y = ops.matmul(x.reshape(8, 8), x.reshape(8, 8), stream=a)
            z = pyaclnn.from_numpy(np.ones(64, np.float32), stream=b)
            del x, y
        x = pyaclnn.from_numpy(np.arange(4, dtype=np.float32), stream=a)
        x.copy_from(np.ones(4, np.float32), stream=b)  # another stream: the layer orders it
        print(x.numpy().tolist(), z.numpy()[:2].tolist(), pyaclnn.hazards())
    """, env_overrides={"PYACLNN_STUB_HAZARDS": "error"})
    assert code == 0, err
    assert "pyaclnn-stub hazard" not in err, err
    assert out.strip() == "[1.0, 1.0, 1.0, 1.0] [1.0, 1.0] []", out


def test_the_mode_is_read_from_the_environment_and_bad_values_say_so():
    code, out, err = run_python("""
        import pyaclnn._hazards as h
        print(h.hazard_mode())
    """, env_overrides={"PYACLNN_STUB_HAZARDS": "loud"})
    assert code == 0 and out.strip() == "off", err
    assert "PYACLNN_STUB_HAZARDS=loud is not one of off, report, error" in err


@pytest.mark.parametrize("source", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_vendor_style_samples_run_clean_under_the_checker(tmp_path, source):
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    include, libdir = pyaclnn.get_include(), pyaclnn.get_library_dir()
    exe = tmp_path / source.stem
    cmd = [compiler, "-std=c++17", "-O0", "-o", str(exe), str(source), f"-I{include}", f"-L{libdir}",
           "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    built = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert built.returncode == 0, built.stderr
    for poison in ("0", "1"):   # with poison, a sample reading memory it never wrote would show too
        env = subprocess_env({"PYACLNN_STUB_HAZARDS": "report", "PYACLNN_STUB_POISON": poison})
        done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "pyaclnn-stub hazard" not in done.stderr, done.stderr
