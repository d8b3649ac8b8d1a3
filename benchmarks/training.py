"""Training step time and memory (issue 20): `glow_mlir.train` on `cpu` against PyTorch
SGD (one thread each, the same model, initial weights, batches and hyper-parameters), for
the digits CNN (`model_zoo.digits_cnn`) and an MLP 784-512-512-10, at batch 64.

    python benchmarks/training.py [--models digits_cnn,mlp] [--steps 50] [--batch 64]

Prints per model: the median CPU time per step of each and their ratio (ours / PyTorch),
the compile time, the first steps' losses of both (they should agree), and the activation
memory of the compiled step (the planned arena) against its peak-live lower bound (the
planner's figure) and against PyTorch's peak allocated bytes during one step (its
profiler's memory events, parameters and their gradients excluded as allocated before).
Nothing is asserted: the machine is shared; read the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from onnx import numpy_helper

import glow_mlir
from glow_mlir import model_zoo


def _torch_model(name: str, proto):
    nn = torch.nn
    if name == "digits_cnn":
        net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    else:
        net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
    arrays = [numpy_helper.to_array(t) for t in proto.graph.initializer]
    state = dict(zip(net.state_dict(), arrays))
    for key, value in net.state_dict().items():
        a = state[key]
        state[key] = torch.tensor(a.T.copy() if a.shape != tuple(value.shape) else a)
    net.load_state_dict(state)
    return net


def _model(name: str, batch: int):
    if name == "digits_cnn":
        return model_zoo.digits_cnn(batch), (batch, 1, 8, 8)
    return model_zoo.mlp(batch, (784, 512, 512, 10)), (batch, 784)


def _torch_peak_bytes(net, opt, x, y) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        opt.zero_grad(set_to_none=False)
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    events = sorted((e for e in prof.events() if e.cpu_memory_usage),
                    key=lambda e: e.time_range.start)
    live = peak = 0
    for e in events:
        live += e.cpu_memory_usage
        peak = max(peak, live)
    return peak


def run(name: str, steps: int, batch: int) -> None:
    proto, shape = _model(name, batch)
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal(shape).astype(np.float32),
             rng.integers(0, 10, batch).astype(np.int64)) for _ in range(steps)]
    t = time.process_time()
    trainer = glow_mlir.train(proto, learning_rate=0.01, momentum=0.9, batch_size=batch,
                              backend="cpu", cache=False, num_threads=1)
    compile_s = time.process_time() - t
    torch.set_num_threads(1)
    net = _torch_model(name, proto)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    input_name = trainer.signature.inputs[0]
    ours, theirs, losses = [], [], []
    for x, y in data:
        t = time.process_time()
        a = trainer.step({input_name: x}, y)
        ours.append(time.process_time() - t)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        t = time.process_time()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(tx), ty)
        loss.backward()
        opt.step()
        theirs.append(time.process_time() - t)
        losses.append((a, loss.item()))
    mo, mt = statistics.median(ours[1:]), statistics.median(theirs[1:])
    mem = trainer.model.memory
    peak = _torch_peak_bytes(net, opt, torch.from_numpy(data[0][0]), torch.from_numpy(data[0][1]))
    worst = max(abs(a - b) / abs(b) for a, b in losses)
    print(f"{name} batch {batch}: step {mo * 1e3:.2f} ms CPU, PyTorch {mt * 1e3:.2f} ms, "
          f"ratio {mo / mt:.2f}; compile {compile_s:.1f} s CPU; "
          f"losses {losses[0][0]:.4f} vs {losses[0][1]:.4f} (worst relative difference over "
          f"{steps} steps {worst:.1e})")
    print(f"  activations {mem.activations_bytes / 1024:.0f} KiB, peak-live bound "
          f"{mem.peak_live_bytes / 1024:.0f} KiB (efficiency {mem.efficiency:.2f}), "
          f"unshared {mem.unshared_bytes / 1024:.0f} KiB; PyTorch peak allocated in a step "
          f"{peak / 1024:.0f} KiB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="digits_cnn,mlp")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    for name in args.models.split(","):
        run(name, args.steps, args.batch)


if __name__ == "__main__":
    main()
