"""ACL Graph capture and replay: the aclmdlRI* family (src/runtime/model.c; tests/c/capture.c).

Tasks queued on a capturing stream are recorded into its model, not run; aclmdlRIExecuteAsync replays
them in capture order on any stream, each replay on the device memory as it then is; a captured aclnn
launch outlives its executor until the model is destroyed; a stream that waits on a captured event
record joins the capture. What a capture forbids fails with the vendor's codes and messages
(hicann/runtime api_error.cc, capture_model_utils.cc); task groups, task update and conditional tasks
are refused as not emulated. The torch_npu side (torch.npu.graph) is in tests/test_torch_npu.py.
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from helpers import REPO_ROOT, build_c_driver, subprocess_env

SOURCE = REPO_ROOT / "tests" / "c" / "capture.c"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, SOURCE)


@pytest.mark.parametrize("hazards", ["off", "error"])
def test_capture_replay_join_errors_threads(driver, tmp_path, hazards):
    env = subprocess_env({"PYACLNN_STUB_HAZARDS": hazards, "ASAN_OPTIONS": "detect_leaks=0",
                          "CAPTURE_JSON": str(tmp_path / "model.json")})
    done = subprocess.run([str(driver), "replay", "join", "errors", "threads", "abandon"], capture_output=True, text=True,
                          timeout=120, env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert re.findall(r"^ok (\w+)", done.stdout, re.M) == ["capture", "replay", "join", "errors", "threads", "abandon"], out
    codes = dict(re.findall(r"^code (\w+) (\d+)$", done.stdout, re.M))
    assert {k: int(v) for k, v in codes.items()} == {
        "ACL_ERROR_RT_PARAM_INVALID": 107000, "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED": 107036,
        "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT": 107031, "ACL_ERROR_RT_STREAM_NOT_CAPTURED": 107029,
        "ACL_ERROR_RT_STREAM_CAPTURED": 107027, "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT": 107030,
        "ACL_ERROR_RT_MODEL_CAPTURED": 107026, "ACL_ERROR_RT_MODEL_EXECUTE": 507011,
        "ACL_ERROR_RT_FEATURE_NOT_SUPPORT": 207000}, out
    # the joined capture: a copy on A, the fork record, B's marker wait, B's copy, the join record and wait
    model = json.loads((tmp_path / "model.json").read_text())
    assert [t["type"] for t in model["tasks"]] == ["memcpy", "event_record", "event_wait", "memcpy",
                                                   "event_record", "event_wait"], model
    assert model["capture_mode"] == "ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL"
