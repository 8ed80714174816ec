"""aclInit / aclFinalize / aclFinalizeReference (abi.md §5.1, hicann/runtime acl.cpp). Each test runs in
a fresh interpreter, since the init state is process-global."""
from __future__ import annotations

import json

from helpers import run_python

PRELUDE = """
import ctypes, json
from pyaclnn import capi
def msg():
    m = capi.aclGetRecentErrMsg()
    return m.decode() if m else None
"""


def run(body: str, env: dict | None = None, args: list[str] | None = None) -> dict:
    code, out, err = run_python(PRELUDE + body, env, args=args)
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_init_twice_counts_references_and_finalize_tears_down():
    r = run("""
first = capi.aclInit(None)
second = capi.aclInit(None)
second_msg = msg()
fin = capi.aclFinalize()
fin_again = capi.aclFinalize()
fin_again_msg = msg()
reinit = capi.aclInit(None)
print(json.dumps(dict(first=first, second=second, second_msg=second_msg, fin=fin,
                      fin_again=fin_again, fin_again_msg=fin_again_msg, reinit=reinit,
                      last=capi.aclFinalize())))
""")
    assert (r["first"], r["second"]) == (0, 100002)
    assert r["second_msg"] is None              # the vendor logs nothing for a repeated init
    assert (r["fin"], r["fin_again"]) == (0, 100037)
    assert "aclFinalize(100037)" in r["fin_again_msg"]
    assert (r["reinit"], r["last"]) == (0, 0)    # re-init after finalize is allowed


def test_finalize_reference_releases_on_the_last_reference():
    r = run("""
ref = ctypes.c_uint64(99)
steps = [capi.aclInit(None), capi.aclInit(None), capi.aclInit(None)]
out = []
for _ in range(4):
    status = capi.aclFinalizeReference(ctypes.byref(ref))
    out.append((status, ref.value))
last_msg = msg()
null_ok = (capi.aclInit(None), capi.aclFinalizeReference(None))
print(json.dumps(dict(steps=steps, out=out, last_msg=last_msg, null_ok=null_ok,
                      fin=capi.aclFinalize())))
""")
    assert r["steps"] == [0, 100002, 100002]
    assert r["out"] == [[0, 2], [0, 1], [0, 0], [100037, 0]]
    assert "aclFinalizeReference(100037)" in r["last_msg"]
    assert r["null_ok"] == [0, 0]
    assert r["fin"] == 100037                   # already torn down by the reference count


def test_first_finalize_without_init_succeeds_like_the_vendor():
    r = run("""
print(json.dumps([capi.aclFinalize(), capi.aclFinalize(), capi.aclFinalizeReference(None)]))
""")
    assert r == [0, 100037, 100037]


def test_runtime_calls_work_without_init():
    r = run("""
set_dev = capi.aclrtSetDevice(0)
p = ctypes.c_void_p()
m = capi.aclrtMalloc(ctypes.byref(p), 16, capi.ACL_MEM_MALLOC_HUGE_FIRST)
print(json.dumps([set_dev, m, capi.aclrtFree(p), capi.aclrtResetDevice(0)]))
""")
    assert r == [0, 0, 0, 0]


def test_config_file_errors(tmp_path):
    missing = tmp_path / "missing.json"
    bad = tmp_path / "bad.json"
    bad.write_text('{"dump": ')
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 11 + "]" * 11)
    r = run("""
import sys
missing, bad, deep, directory = sys.argv[1:5]
results = {}
for name, path in [("missing", missing), ("bad", bad), ("deep", deep), ("directory", directory)]:
    status = capi.aclInit(path.encode())
    results[name] = [status, msg()]
print(json.dumps(results))
""", args=[str(missing), str(bad), str(deep), str(tmp_path)])
    assert r["missing"][0] == 100003 and "aclInit(100003)" in r["missing"][1]
    assert str(missing) in r["missing"][1]
    assert r["bad"][0] == 100006 and "aclInit(100006)" in r["bad"][1]
    assert r["deep"][0] == 100006
    assert r["directory"][0] == 100003


def test_valid_config_files_and_the_same_content_rule(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    good = tmp_path / "good.json"
    good.write_text('{"err_msg_mode": "1", "dump": {"dump_list": [], "dump_path": "/tmp"}}\n')
    r = run("""
import sys
empty, good = sys.argv[1:3]
first = capi.aclInit(good.encode())
capi.aclFinalize()
same = capi.aclInit(good.encode())
capi.aclFinalize()
other = capi.aclInit(empty.encode())        # different content than the first aclInit
other_msg = msg()
print(json.dumps(dict(first=first, same=same, other=other, other_msg=other_msg)))
""", args=[str(empty), str(good)])
    assert (r["first"], r["same"]) == (0, 0)
    assert r["other"] == 100000 and "aclInit(100000)" in r["other_msg"]


def test_empty_config_file_is_accepted(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    r = run("""
import sys
print(json.dumps([capi.aclInit(sys.argv[1].encode()), capi.aclInit(b""), capi.aclFinalize()]))
""", args=[str(empty)])
    assert r == [0, 100002, 0]


def test_leak_report_at_finalize():
    code, out, err = run_python(PRELUDE + """
capi.aclInit(None)
capi.aclrtSetDevice(0)
p = ctypes.c_void_p()
capi.aclrtMalloc(ctypes.byref(p), 100, capi.ACL_MEM_MALLOC_HUGE_FIRST)
capi.aclFinalize()
""", {"PYACLNN_STUB_LEAK_REPORT": "1"})
    assert code == 0, err
    assert "live device allocations 1 (100 bytes)" in err
