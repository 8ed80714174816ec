#!/usr/bin/env python3
"""Fuzz the stub's C ABI through ctypes: random and adversarial arguments, checked statuses.

    python tests/fuzz/fuzz_capi.py --calls 100000 --seed 1          # a fixed, reproducible slice
    python tests/fuzz/fuzz_capi.py --seconds 600                     # a long run, random seed
    python tests/fuzz/fuzz_capi.py --calls 5000 --seed 7 --trace /tmp/fuzz.trace   # log each call first
    python tests/fuzz/fuzz_capi.py --threads 4 --calls 20000 --seed 1    # threads racing (threaded.py)

Every call must either succeed or return a status the headers define, leaving a message for
aclGetRecentErrMsg that names the function; a foreign handle must be refused; the process must
survive; and once the fuzzer has released what it still holds, the stub's live-object counts must
be back to where they started. The last line printed is the verdict with the seed and call count:

    fuzz: seed=1 calls=100000 ... violations=0 OK

Exit status 0 when no promise was broken, 1 otherwise (a crash kills the process: run it in a
subprocess, with --trace to know the last call). See docs/hardening.md.
"""
from __future__ import annotations

import argparse
import faulthandler
import os
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))          # the checkout, when not installed

DEVICE_MEMORY = 64 << 20                               # small emulated HBM: the OOM path is reachable


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=None, help="stop after this many C calls (default 10000)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long (with --calls: first reached)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock; printed)")
    p.add_argument("--devices", type=int, default=2, help="emulated devices (PYACLNN_STUB_DEVICE_COUNT)")
    p.add_argument("--soc", default=None, help="emulated SoC (PYACLNN_STUB_SOC), e.g. Ascend910B4 or Ascend950PR")
    p.add_argument("--trace", default=None, help="write each call to this file before making it")
    p.add_argument("--stats", action="store_true", help="print calls and failures per function")
    p.add_argument("--threads", type=int, default=0,
                   help="multi-threaded mode: this many threads share memory, streams, events and executors "
                        "(see threaded.py)")
    p.add_argument("--tsan-safe", action="store_true",
                   help="with --threads: the same races without data races of the emulated program on device "
                        "bytes (each stream's work touches its own lane of every block), so that ThreadSanitizer "
                        "reports only bugs of the stub; on by itself when TSan is loaded")
    p.add_argument("--skip-op", action="append", default=[], metavar="aclnnXxx",
                   help="leave this operator out (repeatable), e.g. while its owner fixes a finding")
    args = p.parse_args(argv)
    if args.calls is None and args.seconds is None:
        args.calls = 10000
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    return args


def _pick(rng: random.Random, table):
    weights = [w for w, _ in table]
    return rng.choices(table, weights=weights)[0][1]


def _trim(w) -> None:
    """Keeps the model small: releases the oldest objects beyond the caps (as ordinary calls)."""
    from world import DESTROYERS, MAX_LIVE
    for kind, cap in MAX_LIVE.items():
        live = w.live[kind]
        while len(live) > cap + 8:
            h = next((x for x in live if x not in w.owned_tensors and x not in w.owned_scalars), None)
            if h is None:
                break
            w.call(DESTROYERS[kind], h)
            w.kill(kind, h)
            if kind in ("tensor_list", "scalar_list"):
                for item in w.list_members.pop(h, []):
                    w.kill("tensor" if kind == "tensor_list" else "scalar", item)
    while len(w.device) > 64:
        p = next(iter(w.device))
        w.call("aclrtFree", p)
        del w.device[p]
        w.freed_device.append(p)


def _release_all(w) -> None:
    """Synchronises every device and releases everything the model holds."""
    from world import DESTROYERS
    devices = range(w.device_count)
    for dev in devices:
        if w.call("aclrtSetDevice", dev) == 0:
            w.call("aclrtSynchronizeDevice")
    for kind in ("executor", "tensor_list", "scalar_list", "tensor", "scalar", "int_array", "float_array",
                 "bool_array", "event"):
        for h in list(w.live[kind]):
            if h in w.owned_tensors or h in w.owned_scalars:
                continue                     # its list already took it
            w.call(DESTROYERS[kind], h)
            w.kill(kind, h)
            for item in w.list_members.pop(h, []):
                w.kill("tensor" if kind == "tensor_list" else "scalar", item)
    for dev in devices:                      # a stream is destroyed from a thread of its context
        w.call("aclrtSetDevice", dev)
        for h in list(w.live["stream"]):
            if w.call("aclrtDestroyStream", h) == 0:
                w.kill("stream", h)
    for h in list(w.live["context"]):        # takes the streams created in it along
        w.call("aclrtDestroyContext", h)
        w.kill("context", h)
    for p in list(w.device):
        w.call("aclrtFree", p)
    for p in list(w.pinned):
        w.call("aclrtFreeHost", p)
    w.device.clear()
    w.pinned.clear()
    for dev in devices:                      # and the default contexts, with their streams
        w.call("aclrtResetDeviceForce", dev)


def main(argv=None) -> int:
    args = _parse(argv)
    os.environ.setdefault("PYACLNN_BACKEND", "stub")
    os.environ["PYACLNN_STUB_DEVICE_COUNT"] = str(args.devices)
    os.environ["PYACLNN_STUB_DEVICE_MEMORY"] = str(DEVICE_MEMORY)
    if args.soc:
        os.environ["PYACLNN_STUB_SOC"] = args.soc
    faulthandler.enable()
    if args.threads > 0:
        # The threads race frees, copies and launches on shared memory on purpose: the hazard checker
        # would refuse those calls (error mode) or report each of them; it stays off here.
        os.environ["PYACLNN_STUB_HAZARDS"] = "off"
        return _threaded(args)

    import calls_meta
    import calls_ops
    import calls_runtime
    from world import World

    from pyaclnn._stubinfo import leaked, live_counts

    calls_ops.SKIPPED.update(args.skip_op)
    rng = random.Random(args.seed)
    trace = open(args.trace, "w", buffering=1) if args.trace else None
    config_dir = calls_runtime.temp_config_dir()
    w = World(rng, trace=trace, device_count=args.devices)
    start_counts = live_counts()
    if start_counts is None:
        print("fuzz: the loaded backend is not the stub; nothing to do", file=sys.stderr)
        return 2
    table = calls_runtime.GENERATORS + calls_meta.GENERATORS + calls_ops.GENERATORS
    before_init = [g for g in calls_runtime.GENERATORS + calls_meta.GENERATORS if g[1] is not calls_runtime.call_init]
    warmup = min(200, (args.calls or 10 ** 9) // 50)   # calls made before aclInit was ever called

    started = time.monotonic()
    deadline = started + args.seconds if args.seconds else None
    limit = args.calls
    initialised = False
    try:
        while (limit is None or w.calls < limit) and (deadline is None or time.monotonic() < deadline):
            if not initialised and w.calls >= warmup:
                w.call("aclInit", None)
                initialised = True
            _pick(rng, table if initialised else before_init)(w)
            w.end_call()
            if w.calls % 64 == 0:
                _trim(w)
        fuzz_calls = w.calls
        _release_all(w)
        w.call("aclFinalize")
    finally:
        if trace:
            trace.close()
        shutil.rmtree(config_dir, ignore_errors=True)

    left = leaked(start_counts, live_counts())
    if left:
        w.violate(f"live objects not back to their starting counts after releasing everything: {left}")
    elapsed = time.monotonic() - started
    if args.stats:
        for name, n in sorted(w.per_function.items()):
            print(f"  {name:48s} {n:8d} calls {w.failures[name]:8d} refused")
    for v in w.violations[:50]:
        print("VIOLATION", v)
    if len(w.violations) > 50:
        print(f"... and {len(w.violations) - 50} more violations")
    verdict = "OK" if not w.violations else "FAILED"
    print(f"fuzz: seed={args.seed} calls={fuzz_calls} (+{w.calls - fuzz_calls} cleanup, {w.oracle_reads} message "
          f"reads) refused={sum(w.failures.values())} functions={len(w.per_function)} "
          f"violations={len(w.violations)} time={elapsed:.1f}s {verdict}")
    return 0 if not w.violations else 1


def _threaded(args) -> int:
    from threaded import ThreadedRun, tsan_loaded

    from pyaclnn import capi
    from pyaclnn._stubinfo import live_counts

    if live_counts() is None:
        print("fuzz: the loaded backend is not the stub; nothing to do", file=sys.stderr)
        return 2
    assert capi.aclInit(None) in (0, capi.ACL_ERROR_REPEAT_INITIALIZE)
    started = time.monotonic()
    tsan_safe = args.tsan_safe or tsan_loaded()
    run = ThreadedRun(args.seed, args.threads, args.calls, args.seconds, tsan_safe=tsan_safe)
    run.run()
    for v in run.violations[:50]:
        print("VIOLATION", v)
    verdict = "OK" if not run.violations else "FAILED"
    print(f"fuzz: seed={args.seed} threads={args.threads}{' tsan-safe' if tsan_safe else ''} calls={run.calls} "
          f"forks={run.shared.forks} violations={len(run.violations)} "
          f"time={time.monotonic() - started:.1f}s {verdict}")
    return 0 if not run.violations else 1


if __name__ == "__main__":
    sys.exit(main())
