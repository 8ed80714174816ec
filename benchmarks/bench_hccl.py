"""A 64 MiB float32 all-reduce across 2 local ranks: backend "hccl" on npu (the emulated libhccl) against backend
"gloo" on cpu, in the same run and the same processes.

    python -m pyaclnn exec -- python benchmarks/bench_hccl.py [--mib 64] [--repeat 5] [--world 2]

Prints JSON: best and median seconds of each, and ratio = gloo best / hccl best (the bar is >= 0.5). Not a test:
numbers depend on the machine and its load. docs/hccl.md has the figures measured.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import time


def _rank(rank, args, port, queue):
    import torch
    import torch_npu  # noqa: F401
    import torch.distributed as dist
    torch.npu.set_device(0)
    dist.init_process_group("hccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.world)
    cpu = dist.new_group(backend="gloo")
    n = args.mib * (1 << 20) // 4
    times = {"hccl": [], "gloo": []}
    on_npu, on_cpu = torch.ones(n, device="npu"), torch.ones(n)
    for i in range(args.repeat + 1):
        for name, tensor, group in (("hccl", on_npu, None), ("gloo", on_cpu, cpu)):
            dist.barrier(group=cpu)
            start = time.perf_counter()
            dist.all_reduce(tensor, group=group)
            if name == "hccl":
                torch.npu.synchronize()
            if i:  # the first round warms up
                times[name].append(time.perf_counter() - start)
    if rank == 0:
        queue.put(times)
    dist.barrier(group=cpu)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--world", type=int, default=2)
    args = parser.parse_args()
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, args, port, queue)) for r in range(args.world)]
    for p in procs:
        p.start()
    times = queue.get(timeout=600)
    for p in procs:
        p.join(timeout=60)
    out = {"mib": args.mib, "world": args.world, "repeat": args.repeat}
    for name, ts in times.items():
        out[name] = {"best_s": min(ts), "median_s": statistics.median(ts)}
    out["ratio_gloo_over_hccl"] = out["gloo"]["best_s"] / out["hccl"]["best_s"]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
