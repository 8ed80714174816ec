"""pytest plugin (entry point ``pytest11``), off unless asked: ``pytest --aclnn-emulator``, ``aclnn_emulator =
true`` in the pytest configuration, or PYACLNN_EMULATE=1 in the environment put the emulator in place before
any conftest or test module imports torch, pass it to subprocesses (PYACLNN_EMULATE=1, read by the start-up
hook), and print one header line. ``--aclnn-hazards=report|error`` runs the stream-hazard checker
(PYACLNN_STUB_HAZARDS). Without any of them the plugin does nothing."""
from __future__ import annotations

import os

import pytest

_active = False


def pytest_addoption(parser) -> None:
    group = parser.getgroup("aclnn-emulator", "pyaclnn's CPU emulator of CANN")
    group.addoption("--aclnn-emulator", action="store_true", default=False,
                    help="run torch_npu / CANN code on pyaclnn's CPU emulator (also: PYACLNN_EMULATE=1)")
    group.addoption("--aclnn-hazards", choices=["off", "report", "error"], default=None,
                    help="the emulator's stream-hazard checker (PYACLNN_STUB_HAZARDS): report or fail on "
                         "ordering bugs real hardware hides")
    parser.addini("aclnn_emulator", type="bool", default=False,
                  help="run torch_npu / CANN code on pyaclnn's CPU emulator")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    global _active
    from ._emulate import activate, requested
    ns = early_config.known_args_namespace
    if not (getattr(ns, "aclnn_emulator", False) or early_config.getini("aclnn_emulator") or requested()):
        return
    if getattr(ns, "aclnn_hazards", None):
        os.environ["PYACLNN_STUB_HAZARDS"] = ns.aclnn_hazards
    activate()          # a BackendError (torch_npu already loaded, no stub) stops pytest with its message
    _active = True


def pytest_report_header(config) -> str | None:
    if not _active:
        return None
    from ._emulate import describe
    return describe()
