"""`glow_mlir.train`: compiled training steps against PyTorch SGD step by step, the
trained weights and the exported model, and every kind of bad request."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.text import DiagnosticError
from glow_mlir.runtime.training import TrainingInputError
from glow_mlir.transforms.graph.differentiate import TrainingError

torch = pytest.importorskip("torch")


def _torch_digits_cnn(model: onnx.ModelProto):
    """digits_cnn in PyTorch with the ONNX model's initial weights."""
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    params = dict(zip(["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias",
                       "9.weight", "9.bias"], init.values()))
    net.load_state_dict({k: torch.tensor(v) for k, v in params.items()})
    return net, dict(zip(init, params))


def _batches(steps: int, batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield (rng.uniform(0, 1, (batch, 1, 8, 8)).astype(np.float32),
               rng.integers(0, 10, batch).astype(np.int64))


@pytest.mark.parametrize("backend,steps", [("cpu", 100), ("interpreter", 5)])
def test_steps_match_torch_sgd(backend: str, steps: int) -> None:
    """The same model, initialisation and batches: per-step losses within 1e-3 relative
    over 100 steps (momentum and weight decay on), and the weights after 30 steps within
    1e-3 of the largest. (Later, one max-pool tie or relu sign that rounding flips moves
    the trajectories apart: measured 3e-7 after 30 cpu steps, 1e-2 after 100, with the
    losses still within 1e-3.)"""
    model = model_zoo.digits_cnn()
    trainer = glow_mlir.train(model, learning_rate=0.05, momentum=0.9, l2=1e-3,
                              batch_size=16, backend=backend, cache=False)
    net, names = _torch_digits_cnn(model)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
    compared = False
    for i, (x, y) in enumerate(_batches(steps, 16)):
        ours = trainer.step({"input": x}, y)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        opt.step()
        assert abs(ours - loss.item()) <= 1e-3 * abs(loss.item()), i
        if i + 1 == min(steps, 30):
            state = net.state_dict()
            for name, w in trainer.weights.items():
                want = state[names[name]].numpy()
                assert np.max(np.abs(w - want)) <= 1e-3 * np.max(np.abs(want)), name
            compared = True
    assert compared


def test_export_holds_the_trained_weights() -> None:
    model = model_zoo.digits_cnn()
    trainer = glow_mlir.train(model, learning_rate=0.1, batch_size=8, backend="interpreter",
                              cache=False)
    x, y = next(_batches(1, 8))
    before = glow_mlir.compile(model, backend="interpreter", input_shapes={"batch": 8},
                               cache=False)(x)[0]
    first = trainer.step(x, y)
    second = trainer.step(x, y)
    assert second < first  # the same batch again: SGD lowered its loss
    exported = trainer.export()
    onnx.checker.check_model(exported)
    trained = {t.name: numpy_helper.to_array(t) for t in exported.graph.initializer}
    assert trained.keys() == trainer.weights.keys()
    for name, w in trainer.weights.items():
        np.testing.assert_array_equal(trained[name], w)
    after = glow_mlir.compile(exported, backend="interpreter", input_shapes={"batch": 8},
                              cache=False)(x)[0]
    assert not np.allclose(before, after)
    # the given model is untouched
    assert all(np.array_equal(numpy_helper.to_array(t), numpy_helper.to_array(u))
               for t, u in zip(model.graph.initializer, model_zoo.digits_cnn().graph.initializer))


def test_trainable_subset_and_mse() -> None:
    """Only the named initializers change; mse against targets of the output's shape."""
    model = model_zoo.digits_cnn()
    trainer = glow_mlir.train(model, loss="mse", learning_rate=0.1, batch_size=4,
                              trainable=["fc_w2", "fc_b2"], backend="interpreter", cache=False)
    assert sorted(trainer.weights) == ["fc_b2", "fc_w2"]
    x, _ = next(_batches(1, 4))
    start = {k: v.copy() for k, v in trainer.weights.items()}
    trainer.step(x, np.zeros((4, 10), np.float32))
    assert all(not np.array_equal(start[k], v) for k, v in trainer.weights.items())


# ---------------------------------------------------------------------------- bad input
def test_unknown_loss() -> None:
    with pytest.raises(TrainingError, match="unknown loss 'hinge' .*cross_entropy, mse"):
        glow_mlir.train(model_zoo.digits_cnn(), loss="hinge", batch_size=2)


def test_bad_hyper_parameter() -> None:
    with pytest.raises(TrainingError, match="learning rate must be a finite number >= 0"):
        glow_mlir.train(model_zoo.digits_cnn(), learning_rate=-1.0, batch_size=2)


def test_unknown_trainable_name() -> None:
    with pytest.raises(TrainingError, match="no initializer named 'fc_w9' .*conv_b1, conv_b2"):
        glow_mlir.train(model_zoo.digits_cnn(), trainable=["fc_w9"], batch_size=2,
                        backend="interpreter")


@pytest.mark.parametrize("labels,message", [
    (np.zeros((3,), np.int64), r"labels are int64 of shape \(3,\); cross_entropy takes "
                               r"integer class indices of shape \(2,\)"),
    (np.zeros((2,), np.float32), "labels are float32"),
    (np.array([0, 10]), r"class indices in \[0, 10\), got values from 0 to 10"),
])
def test_bad_labels(labels: np.ndarray, message: str) -> None:
    trainer = glow_mlir.train(model_zoo.digits_cnn(), batch_size=2, backend="interpreter",
                              cache=False)
    x, _ = next(_batches(1, 2))
    with pytest.raises(TrainingInputError, match=message):
        trainer.step(x, labels)


def test_mse_labels_of_the_wrong_shape() -> None:
    trainer = glow_mlir.train(model_zoo.digits_cnn(), loss="mse", batch_size=2,
                              backend="interpreter", cache=False)
    x, _ = next(_batches(1, 2))
    with pytest.raises(TrainingInputError, match=r"mse takes targets of the output's shape "
                                                 r"\(2, 10\)"):
        trainer.step(x, np.zeros((2,), np.float32))


def test_ops_without_gradient_are_listed_at_once() -> None:
    """Sin and Floor have no gradient rule: one error, at each op."""
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Sin", ["h"], ["s"]),
         helper.make_node("Floor", ["s"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(DiagnosticError) as err:
        glow_mlir.train(model, loss="mse", backend="interpreter")
    text = str(err.value)
    assert "2 op(s) on the way from the weights to the loss have no gradient" in text
    assert "'glow.sin' op has no gradient" in text and "'glow.floor' op has no gradient" in text
    assert isinstance(err.value, UserError)


@pytest.mark.parametrize("batch_size", [0, -1, True, 2.5, "8"])
def test_a_batch_size_that_is_not_a_positive_integer(batch_size) -> None:
    """2.5 was truncated to 2 and then refused as a mismatch with the graph's batch."""
    with pytest.raises(TrainingError, match="batch_size must be a positive integer"):
        glow_mlir.train(model_zoo.digits_cnn(), batch_size=batch_size)


@pytest.mark.parametrize("option", ["learning_rate", "momentum", "l1", "l2"])
def test_a_hyper_parameter_that_is_not_a_number(option) -> None:
    """A string was a TypeError from the comparison."""
    with pytest.raises(TrainingError, match="must be a finite number >= 0, got 'x'"):
        glow_mlir.train(model_zoo.digits_cnn(), batch_size=8, **{option: "x"})


def test_inputs_of_the_wrong_shape() -> None:
    trainer = glow_mlir.train(model_zoo.digits_cnn(), batch_size=2, cache=False)
    with pytest.raises(TrainingInputError, match=r"input 'input' is float32 of shape "
                                                 r"\(3, 1, 8, 8\); expected float32"):
        trainer.step(np.zeros((3, 1, 8, 8), np.float32), np.zeros(2, np.int64))
    with pytest.raises(TrainingInputError, match="unknown input"):
        trainer.step({"image": np.zeros((2, 1, 8, 8), np.float32)}, np.zeros(2, np.int64))


# ---------------------------------------------------------------------------- glow-compile
def _glow_compile(tmp_path, *args: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "digits.onnx"
    onnx.save(model_zoo.digits_cnn(batch=2), path)
    src = Path(__file__).resolve().parents[2] / "src"
    return subprocess.run([sys.executable, "-m", "glow_mlir.tools.glow_compile", str(path),
                           *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(src)})


def test_glow_compile_emits_the_training_graph(tmp_path) -> None:
    proc = _glow_compile(tmp_path, "--emit", "training-graph", "--momentum", "0.9")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert '%labels: tensor<2xi64> {glow.name = "labels", glow.input_checks = [' in out
    assert 'tensor<f32> {glow.name = "loss"}' in out
    assert '{glow.name = "fc_w2.momentum.updated", glow.updates = "fc_w2.momentum"}' in out
    assert 'glow.initial = dense_resource<fc_w2>' in out
    assert "glow.max_pool_grad" in out and "glow.log_soft_max" in out


def test_glow_run_checks_a_training_graphs_labels(tmp_path) -> None:
    """Labels outside the classes made a loss of -0 (a one-hot row of zeros) on a training
    graph run by glow-run; the graph now carries the check Trainer.step makes."""
    import subprocess
    import sys

    proc = _glow_compile(tmp_path, "--emit", "training-graph", "-o", str(tmp_path / "t.mlir"))
    assert proc.returncode == 0, proc.stderr
    for labels, ok in (([3, 9], True), ([3, 99], False)):
        np.savez(tmp_path / "in.npz", input=np.zeros((2, 1, 8, 8), np.float32),
                 labels=np.array(labels, np.int64))
        run = subprocess.run([sys.executable, "-m", "glow_mlir.tools.glow_run",
                              str(tmp_path / "t.mlir"), "--inputs", str(tmp_path / "in.npz"),
                              "--backend", "interpreter"], capture_output=True, text=True,
                             timeout=300)
        assert (run.returncode == 0) == ok, run.stderr
        if not ok:
            assert run.stderr.strip() == (f"glow-run: error: inputs '{tmp_path / 'in.npz'}': "
                                          f"input 'labels' at [1] is 99: class labels must "
                                          f"be in [0, 10) (1 bad value(s))")


def test_glow_compile_train_emits_the_step_with_weights_updated_in_place(tmp_path) -> None:
    proc = _glow_compile(tmp_path, "--train", "--momentum", "0.9", "--emit", "instr")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert ("glow_ir.weight @fc_w2 mutable : memref<64x10xf32> = dense_resource<fc_w2> : "
            "tensor<64x10xf32>") in out
    assert "glow_ir.weight @fc_w2.momentum mutable : memref<64x10xf32> = dense_resource<" in out
    assert "glow_ir.element_sub @out %fc_w2, @in %fc_w2, @in %" in out
    assert "@out %fc_w2.momentum, @in %" in out
    assert "glow_ir.copy @out %fc_w2" not in out and "fc_w2.updated" not in out


def test_glow_compile_train_with_save_is_one_line(tmp_path) -> None:
    proc = _glow_compile(tmp_path, "--train", "--save", str(tmp_path / "step.glow"))
    assert proc.returncode == 1
    assert proc.stderr == ("glow-compile: error: --train compiles a training step, whose "
                           "weights are state that --save cannot carry: drop one of them\n")


def test_glow_compile_unknown_loss_is_one_line(tmp_path) -> None:
    proc = _glow_compile(tmp_path, "--emit", "training-graph", "--loss", "hinge")
    assert proc.returncode == 1
    assert proc.stderr == ("glow-compile: error: unknown loss 'hinge' (the losses: "
                           "cross_entropy, mse)\n")


def test_batch_norm_trains_on_batch_statistics_like_torch() -> None:
    """conv, batch norm, relu, linear: 20 steps against PyTorch in training mode, then
    the weights and the running statistics (ONNX momentum 0.9 is PyTorch's 0.1)."""
    nb = model_zoo.NetBuilder("bn", seed=3)
    x = nb.relu(nb.batch_norm(nb.conv("input", 1, 4, 3), 4))
    x = nb.op("Flatten", [x], "flatten", axis=1)
    nb.gemm(x, 4 * 8 * 8, 10)
    nb.nodes[-1].output[0] = "logits"
    model = nb.build([("input", ["batch", 1, 8, 8], TensorProto.FLOAT)], ["logits"])
    trainer = glow_mlir.train(model, learning_rate=0.05, momentum=0.9, batch_size=8,
                              cache=False)
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.Flatten(), nn.Linear(256, 10))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    keys = ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
            "4.weight", "4.bias"]
    names = dict(zip(init, keys))
    net.load_state_dict({k: torch.tensor(init[n]) for n, k in names.items()}, strict=False)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for i, (x, y) in enumerate(_batches(20, 8)):
        ours = trainer.step(x, y)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        opt.step()
        assert abs(ours - loss.item()) <= 1e-4 * abs(loss.item()), i
    state = net.state_dict()
    assert set(trainer.weights) == set(init)  # the running statistics are trained too
    for name, w in trainer.weights.items():
        want = state[names[name]].numpy()
        assert np.max(np.abs(w - want)) <= 1e-4 * np.max(np.abs(want)), name


def test_a_batch_of_zero_is_refused_at_the_input(tmp_path, capsys) -> None:
    """The loss is a mean over the batch: a batch of 0 names its input (no division by
    zero), in glow-compile and in glow_mlir.train of a model whose batch is 0."""
    from glow_mlir.ir.errors import UserError
    from glow_mlir.tools import glow_compile
    from tool_testing import in_process

    onnx.save(model_zoo.digits_cnn(), tmp_path / "digits.onnx")
    code, _, err = in_process(glow_compile.main, capsys, tmp_path / "digits.onnx",
                              "--input-shape", "batch=0", "--train", "--emit", "instr")
    assert code == 1
    assert err == ("glow-compile: error: 'func.func' op input 'input' has batch 0 (shape "
                   "0x1x8x8): a training step needs a batch of at least one sample\n")
    with pytest.raises(UserError, match="input 'input' has batch 0"):
        glow_mlir.train(model_zoo.digits_cnn(batch=0), cache=False)


@pytest.mark.parametrize("flags", [("--loss", "mse"), ("--learning-rate", "0.5"),
                                   ("--momentum", "0.9")])
def test_training_flags_without_train_are_refused(tmp_path, flags) -> None:
    """A training flag would be ignored without --train or --emit training-graph."""
    proc = _glow_compile(tmp_path, *flags, "--emit", "instr")
    assert proc.returncode == 1
    assert proc.stderr == (f"glow-compile: error: {flags[0]} needs --train (or --emit "
                           f"training-graph): it describes a training step\n")


def test_training_flags_reach_the_training_graph(tmp_path) -> None:
    """--learning-rate given with --emit training-graph is the step's (0.5, not 0.01)."""
    proc = _glow_compile(tmp_path, "--emit", "training-graph", "--learning-rate", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert "5.000000e-01" in proc.stdout and "1.000000e-02" not in proc.stdout


def _dense(shape) -> onnx.ModelProto:
    """x (shape) through a 4 -> 3 MatMul: the dims of x are the test's to choose."""
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_dynamic_first_dim_of_minus_one_is_bound_by_batch_size() -> None:
    """-1 is dynamic (as onnxruntime reads it), like a symbol: batch_size binds it."""
    with pytest.raises(TrainingError, match=r"input 'x' dim 0 is dynamic: give train "
                                            r"batch_size=N"):
        glow_mlir.train(_dense([-1, 4]), loss="mse", backend="interpreter", cache=False)
    trainer = glow_mlir.train(_dense([-1, 4]), loss="mse", batch_size=16,
                              backend="interpreter", cache=False)
    assert trainer.model.input_shapes["x"] == (16, 4)
    with pytest.raises(TrainingError, match=r"input 'x' dim 1 is dynamic: train binds only"):
        glow_mlir.train(_dense([2, -1]), loss="mse", batch_size=2, backend="interpreter",
                        cache=False)


def test_input_shapes_is_refused_with_what_train_takes() -> None:
    with pytest.raises(TrainingError, match="train takes batch_size=N.*not input_shapes") as info:
        glow_mlir.train(_dense(["N", 4]), loss="mse", input_shapes={"N": 16},
                        backend="interpreter", cache=False)
    assert "in IR" not in str(info.value)


@pytest.mark.parametrize("shape,batch_size,says", [
    (["n", 4], None, r"input 'x' dim 0 is 'n': give train batch_size=N"),
    (["n", "k"], None, r"dim 0 is 'n'; input 'x' dim 1 is 'k': give train batch_size=N.*; "
                       r"and train binds only the first dim"),
    (["n", "k"], 2, r"^training needs static shapes, but input 'x' dim 1 is 'k': train binds "
                    r"only the first dim"),
])
def test_unbound_dims_say_what_train_takes(shape, batch_size, says) -> None:
    """Not compile()'s input_shapes= or specialize=, which train does not take."""
    with pytest.raises(TrainingError, match=says) as info:
        glow_mlir.train(_dense(shape), loss="mse", batch_size=batch_size,
                        backend="interpreter", cache=False)
    assert "input_shapes" not in str(info.value) and "specialize" not in str(info.value)
