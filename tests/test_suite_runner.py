"""``python -m pyaclnn suite op-plugin PATH``: the runner on a small fake suite
(files that pass, fail at a missing aclnn operator, kill their process, hang, skip), its table, JSON and
baseline check; and, when a checkout of op-plugin is named by PYACLNN_OP_PLUGIN, the shipped baseline's files
on the emulator (CI has no network and no checkout: skipped with that reason)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import helpers

FILES = {
    "test_crash.py": """
        import os
        def test_before():
            pass
        def test_dies():
            os.abort()
    """,
    "test_green.py": """
        from pathlib import Path
        with open(Path(__file__).with_suffix(".runs"), "a") as f:     # how often the file was collected
            f.write("run\\n")
        def test_one():
            assert 1 + 1 == 2
        def test_two():
            pass
    """,
    "test_hang.py": """
        import time
        def test_sleeps():
            time.sleep(120)
    """,
    "test_missing.py": """
        def test_ok():
            pass
        def test_needs_an_operator():
            raise RuntimeError("Current device only support aclnn operators, but aclnnFooBar or "
                               "aclnnFooBarGetWorkspaceSize not found")
    """,
    "test_broken.py": """
        from pathlib import Path
        with open(Path(__file__).with_suffix(".runs"), "a") as f:
            f.write("run\\n")
        import a_module_that_does_not_exist
        def test_never():
            pass
    """,
    # torch_npu's words after a failed launch; the next file of its chunk fails only in the same process
    "test_into_poison.py": """
        import os
        def test_poisons():
            os.environ["FAKE_SUITE_POISONED"] = "1"
            raise RuntimeError("The Inner error is reported as above. The process exits for this inner error, "
                               "and the current working operator name is Identity.")
    """,
    "test_io_victim.py": """
        import os
        def test_fails_after_a_poisoned_file():
            assert "FAKE_SUITE_POISONED" not in os.environ
    """,
    "test_skip.py": """
        import pytest
        @pytest.mark.skip(reason="not on this device")
        def test_skipped():
            pass
    """,
}


def suite(tmp_path, *args):
    return helpers.run_module(["pyaclnn", "suite", "op-plugin", *map(str, args)], timeout=120)


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    root = tmp_path_factory.mktemp("op-plugin") / "test" / "test_base_ops"
    root.mkdir(parents=True)
    for name, body in FILES.items():
        (root / name).write_text(textwrap.dedent(body))
    out = root.parent / "run.json"
    # (8 s a file: a chunk's pytest start-up, which counts against its first file, took over 3 s on a loaded
    # 2-core machine)
    rc, stdout, stderr = suite(root, root, "--jobs", "2", "--chunk", "2", "--timeout", "8", "--json", out)
    assert rc == 0, stderr[-3000:]
    return root, {f["file"]: f for f in json.loads(out.read_text())["files"]}, stdout


def test_each_file_gets_its_counts_and_how_its_process_ended(fake):
    _, files, _ = fake
    g = files["test_green.py"]
    assert (g["passed"], g["failed"], g["errors"], g["green"], g["ended"]) == (2, 0, 0, True, "ok")
    m = files["test_missing.py"]
    assert (m["passed"], m["failed"], m["green"], m["missing"]) == (1, 1, False, "aclnnFooBar")
    b = files["test_broken.py"]                     # does not import: an error, and its chunk goes on
    assert (b["errors"], b["ended"], b["green"], b["missing"]) == (1, "ok", False, "python module a_module_that_does_not_exist")
    s = files["test_skip.py"]
    assert (s["passed"], s["skipped"], s["green"]) == (0, 1, False)


def test_a_file_that_kills_its_process_is_rerun_alone_and_spares_its_chunk(fake):
    _, files, _ = fake
    c = files["test_crash.py"]
    assert c["ended"] == "crash signal 6" and c["passed"] == 1 and not c["green"]
    assert files["test_broken.py"]["ended"] == "ok"    # shared the crashing file's chunk (files run sorted, 2 a chunk)


def test_a_file_after_one_that_poisoned_its_process_is_rerun_alone(fake):
    _, files, _ = fake
    assert files["test_into_poison.py"]["failed"] == 1       # shares a chunk with the victim (sorted, 2 a chunk)
    v = files["test_io_victim.py"]
    assert (v["passed"], v["failed"], v["green"]) == (1, 0, True)


def test_a_hanging_file_times_out_without_holding_the_run(fake):
    _, files, _ = fake
    h = files["test_hang.py"]
    assert h["ended"] == "timeout" and not h["green"]
    assert files["test_green.py"]["green"]              # shared the hanging file's chunk


def test_files_that_finished_before_a_crash_or_a_hang_in_their_chunk_are_not_run_again(fake):
    root, _, _ = fake
    # test_broken ran before test_crash in its chunk, test_green before test_hang: each ran once
    assert (root / "test_broken.runs").read_text() == "run\n"
    assert (root / "test_green.runs").read_text() == "run\n"


def test_the_table_gives_totals_and_the_blocking_operators(fake):
    _, _, stdout = fake
    assert "Ascend950PR: 8 files: 2 all green (25%)" in stdout
    assert "1 crashed or hung" not in stdout and "2 crashed or hung" in stdout
    blockers = stdout.split("blocking the most files: ")[1].splitlines()[0].split(", ")
    assert sorted(blockers) == ["aclnnFooBar 1", "python module a_module_that_does_not_exist 1"]


def test_the_baseline_check_fails_when_a_baseline_file_turns_red(fake, tmp_path):
    root, _, _ = fake
    base = tmp_path / "baseline.json"
    rc, out, err = suite(root, root, "test_green.py", "test_missing.py", "--baseline", base, "--write-baseline")
    assert rc == 0, err
    doc = json.loads(base.read_text())
    assert doc["suites"]["test/test_base_ops"]["green"]["Ascend950PR"] == ["test_green.py"]
    rc, out, err = suite(root, root, "test_green.py", "--baseline", base, "--check-baseline")
    assert rc == 0 and "baseline holds" in out, out + err
    red = tmp_path / "red" / "test" / "test_base_ops"
    red.mkdir(parents=True)
    (red / "test_green.py").write_text("def test_one():\n    assert False\n")
    rc, out, err = suite(red, red, "--baseline", base, "--check-baseline")
    assert rc == 1 and "no longer all green on Ascend950PR: test_green.py" in out, out + err


def test_a_path_without_test_files_is_a_clear_error(tmp_path):
    rc, out, err = suite(tmp_path, tmp_path)
    assert rc == 2 and "no test files matching test_*.py" in err



UPSTREAM = """
    import pytest

    def test_passes():
        pass

    def test_broken_by_itself():
        undefined_helper()

    def test_listed_but_broken_another_way():
        raise RuntimeError("call aclnnFoo failed, error code is 561103")

    def test_listed_and_fixed_upstream():
        pass
"""


def test_listed_upstream_faults_count_apart_only_when_they_fail_the_listed_way(tmp_path):
    root = tmp_path / "op-plugin" / "test" / "test_custom_ops"
    root.mkdir(parents=True)
    (root / "test_upstream.py").write_text(textwrap.dedent(UPSTREAM))
    node = "test_upstream.py::"
    faults = tmp_path / "faults.json"
    listed = {node + "test_broken_by_itself": {"why": "calls a helper the file never defines",
                                               "error": "name 'undefined_helper' is not defined"},
              node + "test_listed_and_fixed_upstream": {"why": "fixed since", "error": "anything"}}
    faults.write_text(json.dumps({"format": 1, "suites": {"test/test_custom_ops": {"faults": listed}}}))
    out_json = tmp_path / "run.json"
    rc, out, err = suite(root, root, "--faults", faults, "--json", out_json)
    assert rc == 0, err
    (f,) = json.loads(out_json.read_text())["files"]
    # the listed fault is apart; an unlisted failure still fails the file
    assert (f["passed"], f["failed"], f["upstream"], f["green"]) == (2, 1, 1, False)
    assert "1 more fail by their own fault" in out
    assert "but passed (1; the list can drop them): test_upstream.py::test_listed_and_fixed_upstream" in out
    # listed the wrong way (another error than the list's): still a failure
    listed[node + "test_listed_but_broken_another_way"] = {"why": "x", "error": "error code is 161002"}
    faults.write_text(json.dumps({"format": 1, "suites": {"test/test_custom_ops": {"faults": listed}}}))
    rc, out, err = suite(root, root, "--faults", faults, "--json", out_json)
    (f,) = json.loads(out_json.read_text())["files"]
    assert (f["failed"], f["upstream"], f["green"]) == (1, 1, False)
    # listed the way it fails: the file is all green apart from its upstream faults
    listed[node + "test_listed_but_broken_another_way"]["error"] = "error code is 561103"
    faults.write_text(json.dumps({"format": 1, "suites": {"test/test_custom_ops": {"faults": listed}}}))
    rc, out, err = suite(root, root, "--faults", faults, "--json", out_json)
    (f,) = json.loads(out_json.read_text())["files"]
    assert (f["passed"], f["failed"], f["upstream"], f["green"]) == (2, 0, 2, True)
    rc, out, err = suite(root, root, "--faults", faults, "--no-faults", "--json", out_json)
    (f,) = json.loads(out_json.read_text())["files"]
    assert (f["failed"], f["upstream"], f["green"]) == (2, 0, False)


def test_the_shipped_upstream_faults_each_say_why_and_how_they_fail():
    from pyaclnn.suite import upstream
    doc = json.loads(upstream.DEFAULT.read_text())
    for entry in doc["suites"].values():
        for node, fault in entry["faults"].items():
            assert node.count("::") >= 1 and node.split("::")[0].endswith(".py"), node
            assert set(fault) == {"why", "error"} and len(fault["why"]) > 20 and fault["error"], node


SEEDED = {
    # op-plugin's files seed NumPy only when run as a script; under the runner every test starts from that seed
    "test_seeded.py": """
        import numpy as np

        FIRST = np.random.RandomState(7).uniform(-10, 10, 4)

        def test_a():
            assert (np.random.uniform(-10, 10, 4) == FIRST).all()

        def test_b():
            assert (np.random.uniform(-10, 10, 4) == FIRST).all()

        if __name__ == "__main__":
            np.random.seed(7)
        """,
    "test_unseeded.py": """
        import numpy as np

        def test_a():
            assert (np.random.rand(4) == np.random.RandomState(0).rand(4)).all()
        """,
}


def test_each_test_starts_from_its_files_main_block_numpy_seed(tmp_path):
    root = tmp_path / "test" / "test_base_ops"
    root.mkdir(parents=True)
    for name, body in SEEDED.items():
        (root / name).write_text(textwrap.dedent(body))
    out = tmp_path / "run.json"
    rc, stdout, stderr = suite(root, root, "--jobs", "1", "--json", out)
    assert rc == 0, stderr[-3000:]
    files = {f["file"]: f for f in json.loads(out.read_text())["files"]}
    assert files["test_seeded.py"]["passed"] == 2 and files["test_unseeded.py"]["passed"] == 1, files
    # PYACLNN_SUITE_SEED=off: NumPy left as pytest found it, so test_b continues test_a's stream
    rc, _, stderr = helpers.run_module(["pyaclnn", "suite", "op-plugin", str(root), "test_seeded.py", "--jobs", "1",
                                        "--json", str(out)], env_overrides={"PYACLNN_SUITE_SEED": "off"}, timeout=120)
    assert rc == 0, stderr[-3000:]
    seeded = json.loads(out.read_text())["files"][0]
    assert (seeded["passed"], seeded["failed"]) == (0, 2), seeded

# ---- the real suite, when a checkout is at hand ---------------------------------------------------------

CHECKOUT = os.environ.get("PYACLNN_OP_PLUGIN")


@pytest.mark.skipif(not CHECKOUT, reason="no op-plugin checkout (set PYACLNN_OP_PLUGIN to one, at the commit "
                    "pyaclnn/suite/op_plugin_baseline.json records; CI has no network to fetch it)")
def test_the_shipped_baseline_still_holds_on_a_checkout():
    from pyaclnn.suite import baseline
    doc = baseline.load(baseline.DEFAULT)
    for suite_name, entry in doc["suites"].items():
        path = Path(CHECKOUT) / suite_name
        for soc, green in entry["green"].items():
            if not green:
                continue
            rc, out, err = helpers.run_module(["pyaclnn", "suite", "op-plugin", str(path), *green, "--soc", soc,
                                               "--check-baseline"], timeout=3600)
            assert rc == 0, out[-6000:] + err[-2000:]
