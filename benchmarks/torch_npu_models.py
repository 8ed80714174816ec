"""The small model styles of tests/_tiny_models.py on ``npu`` (torch_npu on the emulator) against torch CPU.

    python benchmarks/torch_npu_models.py [--repeats 5] [--threads N] [--models llama gpt2 ...] [--no-split]

Per model (Llama-, Qwen2-, Mistral-, Gemma-, GPT-2-, BERT- and T5-style, hidden 64, 2 layers; the batches,
generation loop and losses of tests/_torch_npu_models_child.py), in one child process under
``PYACLNN_EMULATE=1`` with torch's CPU threads and the emulator's kernel pool both set to ``--threads``
(``torch.set_num_threads``, ``PYACLNN_STUB_KERNEL_THREADS``):

* ``forward``  -- eval-mode fp32 forward of the model's batch, synchronised;
* ``generate`` -- greedy generation of 4 new tokens (the decoder-only models with their KV cache, T5 from
  its encoder output; BERT: the forward and the argmax of the masked positions);
* ``train``    -- one training step: forward, loss, backward, ``torch.optim.AdamW`` step, zero_grad.

Each is run once to warm up, then ``repeats`` times on each device alternately; the figure is the best time
(the least disturbed on a shared machine) and the ratio npu / cpu of the best times. Unless ``--no-split``,
the per-op split of one trivial op (benchmarks/launch_split.py) is run too and included. Prints JSON; the
tests never assert on it.

``--kernel-times`` instead splits each ``npu`` step (one child process per model and part, ``repeats`` steps
after a warm-up): the step's best wall time, the calling thread's best CPU time (``time.thread_time``: the
model code, torch, torch_npu's dispatch and whatever of ours runs on that thread), and from the emulator's
``PYACLNN_STUB_KERNEL_TIMES`` the kernels launched per step, their wall and CPU time per step on the threads
that ran them, and the operators whose kernels took the most CPU time (warm-up included in the averages).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _common import print_result, run_result_child  # (benchmarks/ is on sys.path when run as a script)

HERE = Path(__file__).resolve().parent
MODELS = ("llama", "qwen2", "mistral", "gemma", "gpt2", "bert", "t5")
NEW_TOKENS = 4


def child(models: list[str], repeats: int, threads: int, split: str | None = None) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    import torch
    import torch_npu  # noqa: F401

    import _torch_npu_models_child as mc

    torch.set_num_threads(threads)
    tm = mc.tm

    def greedy(name, model, b):
        return mc._generate(name, model, b, -1, new_tokens=NEW_TOKENS)     # no eos: NEW_TOKENS new tokens

    def sync(dev):
        if dev == "npu":
            torch.npu.synchronize()

    def forward(name, dev):
        _, batch, fwd, _ = mc.MODELS[name]
        model, b = mc.build(name, dev).eval(), mc.to(batch(), dev)

        def run():
            with torch.no_grad():
                fwd(model, b)
            sync(dev)
        return run

    def generate(name, dev):
        _, batch, fwd, _ = mc.MODELS[name]
        model, b = mc.build(name, dev).eval(), mc.to(batch(), dev)

        def run():
            with torch.no_grad():
                if name == "bert":
                    lg = fwd(model, b)
                    lg.argmax(-1)[b["labels"] != -100].cpu()
                else:
                    greedy(name, model, b).cpu()
            sync(dev)
        return run

    def train(name, dev):
        _, batch, fwd, loss_fn = mc.MODELS[name]
        model, b = mc.build(name, dev).train(), mc.to(batch(), dev)
        opt = torch.optim.AdamW(model.parameters(), lr=mc.LR)

        def run():
            loss = loss_fn(fwd(model, b), b)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            sync(dev)
        return run

    parts = {"forward": forward, "generate": generate, "train": train}
    if split is not None:                                   # --kernel-times: one npu part, timed alone
        run = parts[split](models[0], "npu")
        run()
        wall = host = float("inf")
        for _ in range(repeats):
            c0, t0 = time.thread_time(), time.perf_counter()
            run()
            wall, host = min(wall, time.perf_counter() - t0), min(host, time.thread_time() - c0)
        print_result({"wall_ms": round(wall * 1e3, 3), "host_cpu_ms": round(host * 1e3, 3), "steps": repeats + 1})
        return
    out = {}
    for name in models:
        out[name] = {}
        for pname, make in parts.items():
            runs = {dev: make(name, dev) for dev in ("cpu", "npu")}
            best = {}
            for dev, run in runs.items():
                run()                                       # warm up: first-call costs, caches
                best[dev] = float("inf")
            for _ in range(repeats):
                for dev, run in runs.items():
                    t0 = time.perf_counter()
                    run()
                    best[dev] = min(best[dev], time.perf_counter() - t0)
            out[name][pname] = {"cpu_ms": round(best["cpu"] * 1e3, 3), "npu_ms": round(best["npu"] * 1e3, 3),
                                "ratio": round(best["npu"] / best["cpu"], 2)}
    print_result(out)


def run_child(models: list[str], repeats: int, threads: int) -> dict:
    env = dict(os.environ, PYACLNN_EMULATE="1", PYACLNN_STUB_KERNEL_THREADS=str(threads))
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    return run_result_child([__file__, "--child", "--repeats", str(repeats), "--threads", str(threads),
                             "--models", *models], env)


def kernel_times(models: list[str], repeats: int, threads: int, top: int = 6) -> dict:
    """Per model and part: the npu step's wall and host CPU time and the emulator's kernel time per step."""
    import tempfile
    out: dict = {}
    for name in models:
        out[name] = {}
        for part in ("forward", "generate", "train"):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "kernels.jsonl"
                env = dict(os.environ, PYACLNN_EMULATE="1", PYACLNN_STUB_KERNEL_THREADS=str(threads),
                           PYACLNN_STUB_KERNEL_TIMES=str(path))
                env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
                res = run_result_child([__file__, "--child", "--repeats", str(repeats), "--threads", str(threads),
                                        "--models", name, "--split", part], env)
                rows = [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []
            steps = res.pop("steps")
            ops = sorted(rows, key=lambda r: -r["cpu_ns"])
            res["kernels_per_step"] = round(sum(r["calls"] for r in rows) / steps, 1)
            res["kernel_ms_per_step"] = round(sum(r["ns"] for r in rows) / steps / 1e6, 3)
            res["kernel_cpu_ms_per_step"] = round(sum(r["cpu_ns"] for r in rows) / steps / 1e6, 3)
            res["top"] = {r["op"]: {"calls": round(r["calls"] / steps, 1), "us": round(r["ns"] / steps / 1e3, 1),
                                    "cpu_us": round(r["cpu_ns"] / steps / 1e3, 1),
                                    "elements_per_call": round(r["elements"] / r["calls"])} for r in ops[:top]}
            out[name][part] = res
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--no-split", action="store_true", help="skip the per-op split of a trivial op")
    ap.add_argument("--kernel-times", action="store_true",
                    help="split each npu step into host CPU time and the emulator's kernel time per operator")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--split", choices=("forward", "generate", "train"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.models, args.repeats, args.threads, args.split)
        return
    if args.kernel_times:
        print(json.dumps({"machine": {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg(), "threads": args.threads},
                          "kernel_times": kernel_times(args.models, args.repeats, args.threads),
                          "loadavg_end": os.getloadavg()}, indent=1))
        return
    out = {"machine": {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg(), "threads": args.threads},
           "models": run_child(args.models, args.repeats, args.threads)}
    if not args.no_split:
        sys.path.insert(0, str(HERE))
        import launch_split
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            twin, probe = launch_split.build(Path(tmp))
            out["launch_split"] = {"c_twin": launch_split.run_twin(twin, 10000, args.repeats),
                                   "torch_npu": launch_split.run_child(probe, 10000, args.repeats, task_queue=True)}
    out["machine"]["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
