"""The emulator without a wrapper: the start-up hook of PYACLNN_EMULATE=1
(pyaclnn-emulate.pth -> pyaclnn/_emulate.py) and the pytest plugin (pytest --aclnn-emulator, the
aclnn_emulator ini option), run in child processes as a user would."""
from __future__ import annotations

import site
from pathlib import Path

import pytest

import helpers
from test_torch_npu import _UNDER_ASAN, _pair_reason

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "torch_npu_pytest"
HOOK = [Path(d) / "pyaclnn-emulate.pth" for d in site.getsitepackages() if (Path(d) / "pyaclnn-emulate.pth").is_file()]
needs_hook = pytest.mark.skipif(not HOOK, reason="pyaclnn-emulate.pth is not installed in this environment's "
                                "site-packages (pip install . / pip install -e . installs it)")


def needs_torch_npu(test):
    test = pytest.mark.skipif(_pair_reason() is not None, reason=_pair_reason() or "")(test)
    return pytest.mark.skipif(_UNDER_ASAN, reason="torch and torch_npu are not run under ASan")(test)


def py(code: str, **env):
    """A fresh interpreter as a user starts it: no PYACLNN_EMULATE unless given, torch's autoload on."""
    base = {"PYACLNN_EMULATE": None, "TORCH_DEVICE_BACKEND_AUTOLOAD": None, "TORCH_NPU_WARNING_DISABLE": "1"}
    return helpers.run_python(code, {**base, **env}, timeout=300)


@needs_hook
def test_without_the_variable_the_hook_imports_nothing():
    rc, out, err = py("import sys, os; print('pyaclnn' in sys.modules, 'ASCEND_HOME_PATH' in os.environ)",
                      ASCEND_HOME_PATH=None, PYACLNN_EMULATE="0")
    assert rc == 0 and out.split() == ["False", "False"], err


@needs_hook
@needs_torch_npu
def test_import_torch_without_cann_or_the_variable_names_the_variable():
    """On a machine without CANN, torch's autoload of torch_npu fails (no libhccl.so): our start-up hook's
    finder says first, in one line, that PYACLNN_EMULATE=1 runs it on the emulator. With CANN it says nothing."""
    rc, out, err = py("import torch", ASCEND_HOME_PATH=None)
    assert rc != 0
    hint = [ln for ln in err.splitlines() if ln.startswith("pyaclnn:")]
    assert len(hint) == 1 and "PYACLNN_EMULATE=1" in hint[0] and "without CANN" in hint[0], err
    rc, out, err = py("import sys; print([type(f).__name__ for f in sys.meta_path].count('PyaclnnEmulateHint'))",
                      ASCEND_HOME_PATH="/opt/some/cann")
    assert rc == 0 and out.strip() == "0", err
    rc, out, err = py("import sys; print([type(f).__name__ for f in sys.meta_path].count('PyaclnnEmulateHint'))",
                      ASCEND_HOME_PATH=None)
    assert rc == 0 and out.strip() == "1", err   # once, although site.py may read the .pth twice


@needs_hook
def test_the_variable_puts_the_emulator_in_place_in_the_process_and_its_children():
    code = """
        import os, subprocess, sys
        print(os.environ.get("ASCEND_HOME_PATH", ""), "pyaclnn._emulate" in sys.modules)
        sys.stdout.flush()
        subprocess.run([sys.executable, "-c", "import os, sys; print(os.environ['PYACLNN_EMULATE'], "
                        "'pyaclnn._preload' in sys.modules)"], check=True)
    """
    rc, out, err = py(code, PYACLNN_EMULATE="1", ASCEND_HOME_PATH=None)
    lines = out.splitlines()
    assert rc == 0 and "toolkit-" in lines[0] and lines[0].endswith("True") and lines[1] == "1 True", out + err


@needs_hook
def test_a_hook_that_cannot_load_the_emulator_says_so_in_one_line_and_the_process_goes_on(tmp_path):
    rc, out, err = py("print('still here')", PYACLNN_EMULATE="1", PYACLNN_STUB_LIBDIR=str(tmp_path / "nowhere"))
    assert rc == 0 and out.strip() == "still here"
    assert err.count("\n") == 1 and err.startswith("pyaclnn: PYACLNN_EMULATE is set, but the emulator could not"), err


@needs_hook
@needs_torch_npu
def test_import_torch_runs_on_the_emulator_with_the_variable():
    rc, out, err = py("import torch; print(torch.ones(2, device='npu') + 1)", PYACLNN_EMULATE="1")
    assert rc == 0 and out.strip().splitlines()[-1] == "tensor([2., 2.], device='npu:0')", err[-3000:]


def run_pytest(*args, cwd=REPO, **env):
    return helpers.run_python("import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
                              {"PYACLNN_EMULATE": None, "TORCH_DEVICE_BACKEND_AUTOLOAD": None,
                               "TORCH_NPU_WARNING_DISABLE": "1", **env}, timeout=600,
                              args=["-p", "no:cacheprovider", *map(str, args)], cwd=cwd)


@needs_torch_npu
def test_pytest_aclnn_emulator_runs_a_torch_npu_test_file_unchanged():
    rc, out, err = run_pytest("--aclnn-emulator", "--aclnn-hazards=error", EXAMPLE)
    assert rc == 0 and "3 passed" in out, out[-3000:] + err[-3000:]
    assert "aclnn emulator: backend stub, SoC Ascend950PR" in out and "hazards error" in out


def test_the_ini_option_turns_the_plugin_on_for_the_tests_and_their_subprocesses(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\naclnn_emulator = true\n")
    (tmp_path / "test_on.py").write_text(
        "import os, subprocess, sys\n\ndef test_on():\n"
        "    assert 'pyaclnn._preload' in sys.modules and os.environ['PYACLNN_EMULATE'] == '1'\n"
        "    assert os.environ['ASCEND_HOME_PATH'].rsplit('/', 1)[-1].startswith('toolkit-')\n")
    rc, out, err = run_pytest(tmp_path / "test_on.py", cwd=tmp_path)
    assert rc == 0 and "1 passed" in out and "aclnn emulator: backend stub" in out, out[-3000:] + err[-3000:]


def test_without_being_asked_the_plugin_does_nothing(tmp_path):
    (tmp_path / "test_plain.py").write_text("import os, sys\n\ndef test_plain():\n"
                                           "    assert 'pyaclnn._preload' not in sys.modules\n")
    rc, out, err = run_pytest(tmp_path / "test_plain.py", cwd=tmp_path, PYACLNN_STUB_LIBDIR=None)
    assert rc == 0 and "1 passed" in out and "aclnn emulator:" not in out, out + err
