"""The loader: which libraries a process opens, in which order, and what happens when one lacks a symbol.

Fake toolkits are laid out under tmp_path with the stub's libraries copied under CANN's file names;
every backend decision runs in a fresh interpreter (the loaded state is process-wide).
Order tests use tiny operator libraries built with cc, each exporting aclnnAmpUpdateScale with a
distinct return value, so which library answered is visible in the status code.
"""
from __future__ import annotations

import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import run_python
from pyaclnn import _loader

ARCH = platform.machine()

# Child snippet: print the backend summary as JSON (optionally after calling something).
REPORT = """
import json, pyaclnn
print(json.dumps(pyaclnn.backend_info()))
"""


def child_report(env: dict) -> dict:
    rc, out, err = run_python(REPORT, env)
    assert rc == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def stub_dir() -> Path:
    d = _loader.stub_library_dir()
    assert d is not None, "stub not built: set PYACLNN_STUB_LIBDIR to a build's lib directory"
    for name in _loader.STUB_LIBS:
        assert (Path(d) / name).is_file(), f"{name} missing in {d}"
    return Path(d)


@pytest.fixture(scope="module")
def tiny_op_lib(tmp_path_factory):
    """Build libtiny_<n>.so whose aclnnAmpUpdateScale returns n (and nothing else)."""
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    root = tmp_path_factory.mktemp("tiny")
    built = {}

    def build(n: int) -> Path:
        if n not in built:
            src = root / f"tiny_{n}.c"
            src.write_text("#include <stdint.h>\n"
                           "__attribute__((visibility(\"default\")))\n"
                           "int32_t aclnnAmpUpdateScale(void *w, uint64_t s, void *e, void *st)"
                           f" {{ return {n}; }}\n"
                           "int32_t aclnnGroupedDynamicMxQuantGetWorkspaceSize(void) "
                           f"{{ return {n}; }}\n")
            out = root / f"libtiny_{n}.so"
            subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
            built[n] = out
        return built[n]
    return build


def make_toolkit(root: Path, stub_dir: Path, ops: dict[str, Path | None], libdir: str = "lib64"):
    """<root>/<libdir>/ with the base libraries and the given op libraries (None = stub's opapi)."""
    lib64 = root / libdir
    lib64.mkdir(parents=True)
    shutil.copy2(stub_dir / "libascendcl.so", lib64 / "libascendcl.so")
    shutil.copy2(stub_dir / "libnnopbase.so", lib64 / "libnnopbase.so")
    for name, src in ops.items():
        shutil.copy2(src or stub_dir / "libopapi.so", lib64 / name)
    return lib64


def toolkit_env(root: Path | None, backend: str, **extra) -> dict:
    env = {"PYACLNN_BACKEND": backend, "ASCEND_HOME_PATH": str(root) if root else None,
           "ASCEND_TOOLKIT_HOME": None, "ASCEND_CUSTOM_OPP_PATH": None, "ASCEND_OPP_PATH": None}
    env.update(extra)
    return env


# ------------------------------------------------------------------------------------------------
# Backend selection
# ------------------------------------------------------------------------------------------------

def test_cann_loads_split_toolkit_from_ascend_home_path(tmp_path, stub_dir):
    lib64 = make_toolkit(tmp_path, stub_dir, {"libopapi_math.so": None, "libopapi_nn.so": None})
    info = child_report(toolkit_env(tmp_path, "cann"))
    assert info["backend"] == "cann"
    assert info["toolkit_root"] == str(tmp_path)
    assert info["libraries"] == [str(lib64 / n) for n in
                                 ("libascendcl.so", "libnnopbase.so", "libopapi_math.so",
                                  "libopapi_nn.so")]


def test_cann_loads_toolkit_with_single_libopapi(tmp_path, stub_dir):
    lib64 = make_toolkit(tmp_path, stub_dir, {"libopapi.so": None})
    code = REPORT + """
from pyaclnn import capi
assert capi.aclInit(None) == 0
assert capi.aclFinalize() == 0
"""
    rc, out, err = run_python(code, toolkit_env(tmp_path, "cann"))
    assert rc == 0, err
    info = json.loads(out)
    assert info["libraries"] == [str(lib64 / n) for n in
                                 ("libascendcl.so", "libnnopbase.so", "libopapi.so")]


def test_cann_finds_arch_linux_lib64(tmp_path, stub_dir):
    lib64 = make_toolkit(tmp_path, stub_dir, {"libopapi.so": None}, libdir=f"{ARCH}-linux/lib64")
    info = child_report(toolkit_env(tmp_path, "cann"))
    assert info["libdir"] == str(lib64)
    assert all(p.startswith(str(lib64)) for p in info["libraries"])


def test_ascend_toolkit_home_is_used_when_home_path_unset(tmp_path, stub_dir):
    make_toolkit(tmp_path, stub_dir, {"libopapi.so": None})
    info = child_report(toolkit_env(None, "cann", ASCEND_TOOLKIT_HOME=str(tmp_path)))
    assert info["toolkit_root"] == str(tmp_path)


def test_auto_prefers_a_toolkit(tmp_path, stub_dir):
    make_toolkit(tmp_path, stub_dir, {"libopapi_math.so": None})
    info = child_report(toolkit_env(tmp_path, "auto"))
    assert info["backend"] == "cann" and info["toolkit_root"] == str(tmp_path)


def test_auto_without_toolkit_falls_back_to_stub(tmp_path, stub_dir):
    info = child_report(toolkit_env(tmp_path, "auto"))      # empty root: no lib64
    assert info["backend"] == "stub"
    assert info["libraries"] == [str(stub_dir / n) for n in _loader.STUB_LIBS]
    assert str(tmp_path / "lib64") in info["fallback_reason"]


def test_stub_ignores_a_toolkit(tmp_path, stub_dir):
    make_toolkit(tmp_path, stub_dir, {"libopapi.so": None})
    info = child_report(toolkit_env(tmp_path, "stub"))
    assert info["backend"] == "stub" and info["toolkit_root"] is None
    assert info["libraries"] == [str(stub_dir / n) for n in _loader.STUB_LIBS]


def test_cann_without_toolkit_is_a_clear_error(tmp_path):
    rc, out, err = run_python(REPORT, toolkit_env(tmp_path, "cann"))
    assert rc != 0
    assert "BackendError" in err and "PYACLNN_BACKEND=cann" in err
    assert str(tmp_path / "lib64") in err                    # lists the directories tried
    assert str(tmp_path / f"{ARCH}-linux" / "lib64") in err


def test_bad_backend_value_is_rejected(tmp_path):
    rc, out, err = run_python(REPORT, {"PYACLNN_BACKEND": "gpu"})
    assert rc != 0 and "PYACLNN_BACKEND='gpu'" in err


# ------------------------------------------------------------------------------------------------
# Operator library order and lazy resolution
# ------------------------------------------------------------------------------------------------

CALL_AMP = """
from pyaclnn import capi
print(capi.aclnnAmpUpdateScale(None, 0, None, None))
"""


def test_split_libraries_follow_nnopbase_priority(tmp_path, stub_dir, tiny_op_lib):
    # nn is listed before math in the directory; nnopbase's order is math, nn, ..., legacy.
    make_toolkit(tmp_path, stub_dir, {"libopapi_nn.so": tiny_op_lib(2), "libopapi_math.so": tiny_op_lib(1),
                                      "libopapi_legacy.so": tiny_op_lib(6), "libopapi.so": tiny_op_lib(9)})
    rc, out, err = run_python(CALL_AMP, toolkit_env(tmp_path, "cann"))
    assert rc == 0, err
    assert out.split() == ["1"]


def test_unknown_split_library_comes_after_known_and_before_libopapi(tmp_path, stub_dir, tiny_op_lib):
    make_toolkit(tmp_path, stub_dir, {"libopapi_zzz.so": tiny_op_lib(7), "libopapi.so": tiny_op_lib(9),
                                      "libaclnn_ops_infer.so": tiny_op_lib(8)})
    code = CALL_AMP + "import pyaclnn; print(*[p.rsplit('/', 1)[1] for p in pyaclnn.library_paths()])\n"
    rc, out, err = run_python(code, toolkit_env(tmp_path, "cann"))
    assert rc == 0, err
    status, libs = out.splitlines()
    assert status == "7"
    assert libs.split() == ["libascendcl.so", "libnnopbase.so", "libopapi_zzz.so", "libopapi.so",
                            "libaclnn_ops_infer.so"]


def test_custom_opp_path_comes_first(tmp_path, stub_dir, tiny_op_lib):
    make_toolkit(tmp_path / "tk", stub_dir, {"libopapi_math.so": tiny_op_lib(1)})
    custom = tmp_path / "custom"
    (custom / "op_api" / "lib").mkdir(parents=True)
    shutil.copy2(tiny_op_lib(3), custom / "op_api" / "lib" / "libcust_opapi.so")
    env = toolkit_env(tmp_path / "tk", "cann", ASCEND_CUSTOM_OPP_PATH=f"/nonexistent:{custom}")
    rc, out, err = run_python(CALL_AMP, env)
    assert rc == 0, err
    assert out.split() == ["3"]


def test_vendor_config_ini_load_priority(tmp_path, stub_dir, tiny_op_lib):
    make_toolkit(tmp_path, stub_dir, {"libopapi.so": tiny_op_lib(9)})
    vendors = tmp_path / "opp" / "vendors"
    for name, n in (("vendorA", 4), ("vendorB", 5)):
        (vendors / name / "op_api" / "lib").mkdir(parents=True)
        shutil.copy2(tiny_op_lib(n), vendors / name / "op_api" / "lib" / "libcust_opapi.so")
    (vendors / "config.ini").write_text("load_priority=vendorB,vendorA\n")
    # ASCEND_OPP_PATH unset: the loader assumes <root>/opp, as set_env.sh would export.
    rc, out, err = run_python(CALL_AMP, toolkit_env(tmp_path, "cann"))
    assert rc == 0, err
    assert out.split() == ["5"]


def test_nothing_loads_at_import_and_symbols_bind_on_first_call(tmp_path, stub_dir):
    code = """
import ctypes
import pyaclnn, pyaclnn.capi, pyaclnn.errors, pyaclnn.dtypes
from pyaclnn import _loader, capi
assert not _loader.is_loaded()
fn = capi.aclInit                           # the function exists from import on ...
assert not _loader.is_loaded()              # ... and looking at it loads nothing
print(fn(None))
assert _loader.is_loaded()
bound = capi.aclInit                        # bound once, then a plain module attribute
cf = capi.cfunc("aclInit")
assert isinstance(cf, ctypes._CFuncPtr) and bound is not fn
assert bound is cf or bound.ctypes_function is cf       # the compiled path wraps the ctypes function
"""
    rc, out, err = run_python(code, toolkit_env(tmp_path, "stub"))
    assert rc == 0, err
    assert out.split() == ["0"]


def test_missing_function_raises_only_when_called(tmp_path, stub_dir, tiny_op_lib):
    # The tiny op library has aclnnGroupedDynamicMxQuantGetWorkspaceSize but not the V2 one.
    lib64 = make_toolkit(tmp_path, stub_dir, {"libopapi.so": tiny_op_lib(42)})
    code = """
from pyaclnn import capi
from pyaclnn.errors import MissingSymbolError
v2 = capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize    # no error yet
print(capi.aclnnGroupedDynamicMxQuantGetWorkspaceSize(None, None, b"rint", 35, 32, None, None, None, None))
print(capi.available("aclnnGroupedDynamicMxQuantV2GetWorkspaceSize"))
try:
    v2(None, None, b"rint", 35, 32, 0, 0.0, None, None, None, None)
except MissingSymbolError as exc:
    print("MISSING", exc.func)
    print(exc)
"""
    rc, out, err = run_python(code, toolkit_env(tmp_path, "cann"))
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "42" and lines[1] == "False"
    assert lines[2] == "MISSING aclnnGroupedDynamicMxQuantV2GetWorkspaceSize"
    message = "\n".join(lines[3:])
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so"):
        assert str(lib64 / name) in message


def test_toolkit_without_operator_libraries_reports_operator_missing(tmp_path, stub_dir):
    make_toolkit(tmp_path, stub_dir, {})
    code = """
from pyaclnn import capi
from pyaclnn.errors import MissingSymbolError
assert capi.aclInit(None) == 0               # the runtime still works
try:
    capi.aclnnAmpUpdateScale(None, 0, None, None)
except MissingSymbolError as exc:
    print(exc.func, len(exc.libraries))
"""
    rc, out, err = run_python(code, toolkit_env(tmp_path, "cann"))
    assert rc == 0, err
    assert out.split() == ["aclnnAmpUpdateScale", "2"]


def test_concurrent_first_use_loads_once(tmp_path):
    code = """
import threading
from pyaclnn import _loader
seen = []
threads = [threading.Thread(target=lambda: seen.append(_loader.backend())) for _ in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
print(len(seen), len({id(b) for b in seen}))
"""
    rc, out, err = run_python(code, {"PYACLNN_BACKEND": "stub"})
    assert rc == 0, err
    assert out.split() == ["8", "1"]


# ------------------------------------------------------------------------------------------------
# Search order and stub location (pure functions, in process)
# ------------------------------------------------------------------------------------------------

def test_toolkit_candidates_order(monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", "/a")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", "/b")
    got = [libdir for _, libdir in _loader.toolkit_candidates()]
    assert got == ["/a/lib64", f"/a/{ARCH}-linux/lib64", "/b/lib64", f"/b/{ARCH}-linux/lib64",
                   "/usr/local/Ascend/ascend-toolkit/latest/lib64",
                   f"/usr/local/Ascend/ascend-toolkit/latest/{ARCH}-linux/lib64",
                   "/usr/local/Ascend/cann/lib64", f"/usr/local/Ascend/cann/{ARCH}-linux/lib64"]


def test_operator_libraries_deduplicate_symlinks(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)
    builtin = tmp_path / "opp/built-in/op_impl/ai_core/tbe/op_api/lib/linux" / ARCH
    builtin.mkdir(parents=True)
    (builtin / "libopapi.so").write_bytes(b"")
    (builtin / "libaclnn_math.so").write_bytes(b"")
    lib64 = tmp_path / "lib64"
    lib64.mkdir()
    (lib64 / "libopapi.so").symlink_to(builtin / "libopapi.so")     # 8.x layout: lib64 links
    got = _loader.operator_libraries(str(tmp_path), str(lib64))
    assert got == [lib64 / "libopapi.so", builtin / "libaclnn_math.so"]


def test_stub_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("PYACLNN_STUB_LIBDIR", str(tmp_path))
    assert _loader.stub_library_dir() == str(tmp_path.resolve())


def test_stub_dir_searches_every_package_path_entry(monkeypatch, tmp_path):
    # An editable install: sources in the checkout, built stub in site-packages/pyaclnn/_stub/lib.
    import pyaclnn
    site = tmp_path / "site-packages" / "pyaclnn"
    (site / "_stub" / "lib").mkdir(parents=True)
    (site / "_stub" / "include").mkdir(parents=True)
    monkeypatch.delenv("PYACLNN_STUB_LIBDIR", raising=False)
    checkout = tmp_path / "checkout" / "pyaclnn"           # the sources: no built stub there
    checkout.mkdir(parents=True)
    monkeypatch.setattr(pyaclnn, "__path__", [str(checkout), str(site)])
    assert _loader.stub_library_dir() == str(site / "_stub" / "lib")
    assert pyaclnn.get_library_dir() == str(site / "_stub" / "lib")
    assert pyaclnn.get_include() == str(site / "_stub" / "include")


def test_include_dir_of_a_build_tree_in_use(monkeypatch, tmp_path):
    # PYACLNN_STUB_LIBDIR=<build>/lib: the headers the build assembled beside it (generated ones included)
    import pyaclnn
    (tmp_path / "lib").mkdir()
    (tmp_path / "include" / "acl").mkdir(parents=True)
    monkeypatch.setenv("PYACLNN_STUB_LIBDIR", str(tmp_path / "lib"))
    assert pyaclnn.get_include() == str(tmp_path / "include")


def test_include_dir_falls_back_to_checkout_headers(monkeypatch):
    import pyaclnn
    checkout = Path(pyaclnn.__file__).resolve().parent.parent
    monkeypatch.setattr(pyaclnn, "__path__", [str(checkout / "pyaclnn")])
    monkeypatch.delenv("PYACLNN_STUB_LIBDIR", raising=False)
    from pyaclnn import _stubpaths
    monkeypatch.setattr(_stubpaths, "_installed_stub", lambda: None)   # (its headers would come first)
    if (checkout / "pyaclnn" / "_stub" / "include").is_dir():
        pytest.skip("an installed stub include dir shadows the checkout")
    assert pyaclnn.get_include() == str(checkout / "native_stubs" / "include")
    assert (Path(pyaclnn.get_include()) / "acl" / "acl.h").is_file()
