"""Small models trained on data scikit-learn bundles, so int8 accuracy can be measured on
real data (there are no downloadable weights here).

- `digits_cnn`, `digits_mlp`: the 8x8 handwritten digits (`load_digits`, 1,797 images,
  10 classes);
- `cancer_mlp`: the Wisconsin breast cancer features (`load_breast_cancer`, 569 samples,
  30 features, 2 classes), standardized with the training split's mean and deviation.

Each data set is split once by a fixed permutation (seed 0) into train (60%),
calibration (10%) and test (30%): the quantization profile sees only the calibration
split, the accuracy only the test split, training only the train split. Training is torch
with fixed seeds (torch.manual_seed(0), one thread, mini-batch order from a seeded
generator, Adam), exported to ONNX with a fixed batch size (`BATCH`; the last batch of a
split is padded and its padding ignored).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

BATCH = 30
SEED = 0


@dataclass
class Trained:
    """An ONNX model and its data: calibration and test batches of `BATCH` rows, the test
    labels (padding excluded)."""

    name: str
    model: object  # onnx.ModelProto
    calibration: list[dict[str, np.ndarray]]
    test: list[dict[str, np.ndarray]]
    test_labels: np.ndarray


def _split(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.random.default_rng(SEED).permutation(n)
    a, b = int(n * 0.6), int(n * 0.7)
    return order[:a], order[a:b], order[b:]


def _batches(x: np.ndarray) -> list[dict[str, np.ndarray]]:
    pad = (-len(x)) % BATCH
    x = np.concatenate([x, np.zeros((pad, *x.shape[1:]), x.dtype)])
    return [{"x": x[i:i + BATCH]} for i in range(0, len(x), BATCH)]


def accuracy(outputs: list[np.ndarray], labels: np.ndarray) -> float:
    """Top-1 accuracy (%) of batched logits against `labels` (padding rows dropped)."""
    pred = np.concatenate([o.reshape(o.shape[0], -1) for o in outputs]).argmax(1)[:len(labels)]
    return 100.0 * float(np.mean(pred == labels))


def _train(net, x: np.ndarray, y: np.ndarray, epochs: int, lr: float):
    import torch

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    for p in net.parameters():  # re-initialized under the seed, whatever came before
        if p.dim() > 1:
            torch.nn.init.kaiming_uniform_(p, a=5 ** 0.5)
        else:
            torch.nn.init.uniform_(p, -0.05, 0.05)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
    gen = torch.Generator().manual_seed(SEED)
    for _ in range(epochs):
        for idx in torch.randperm(len(xt), generator=gen).split(32):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(xt[idx]), yt[idx]).backward()
            opt.step()
    return net.eval()


def _export(net, shape: tuple[int, ...]):
    import onnx
    import torch

    buf = io.BytesIO()
    torch.onnx.export(net, (torch.zeros(shape),), buf, input_names=["x"], output_names=["y"],
                      opset_version=17, dynamo=False)
    return onnx.load_from_string(buf.getvalue())


def _make(name: str, net, x: np.ndarray, y: np.ndarray, epochs: int, lr: float) -> Trained:
    train, calib, test = _split(len(x))
    _train(net, x[train], y[train], epochs, lr)
    model = _export(net, (BATCH, *x.shape[1:]))
    return Trained(name, model, _batches(x[calib]), _batches(x[test]), y[test])


def digits_cnn(epochs: int = 15) -> Trained:
    import torch
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]  # [N, 1, 8, 8] in [0, 1]
    torch.manual_seed(SEED)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1, stride=2), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 10))
    return _make("digits_cnn", net, x, d.target, epochs, 3e-3)


def digits_mlp(epochs: int = 30) -> Trained:
    import torch
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    torch.manual_seed(SEED)
    net = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 10))
    return _make("digits_mlp", net, x, d.target, epochs, 3e-3)


def cancer_mlp(epochs: int = 40) -> Trained:
    import torch
    from sklearn.datasets import load_breast_cancer

    d = load_breast_cancer()
    train, _, _ = _split(len(d.data))
    mean, std = d.data[train].mean(0), d.data[train].std(0) + 1e-6
    x = ((d.data - mean) / std).astype(np.float32)
    torch.manual_seed(SEED)
    net = torch.nn.Sequential(torch.nn.Linear(30, 32), torch.nn.ReLU(),
                              torch.nn.Linear(32, 2))
    return _make("cancer_mlp", net, x, d.target, epochs, 1e-3)


MODELS = {"digits_cnn": digits_cnn, "digits_mlp": digits_mlp, "cancer_mlp": cancer_mlp}
