"""A training step's weights are state: mutable weights of the compiled model, updated in
place by the step (no copy in or out), kept between steps, separate per Trainer, and
what `weights` and `export()` read."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.dialects import glow_ir
from glow_mlir.runtime.saved_model import SaveError


def _batches(steps: int, batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield (rng.uniform(0, 1, (batch, 1, 8, 8)).astype(np.float32),
               rng.integers(0, 10, batch).astype(np.int64))


def _initializers(model) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def test_a_cpu_step_updates_the_weights_where_they_are() -> None:
    """The state arrays taken before the steps are the ones the steps change: same
    addresses, new values (the trained weights `weights` reads, in the ONNX layout), and
    the step's inputs and outputs are only the batch, the labels, the logits and the
    loss."""
    trainer = glow_mlir.train(model_zoo.digits_cnn(), learning_rate=0.1, momentum=0.9,
                              batch_size=4, cache=False, num_threads=1)
    model = trainer.model
    assert model.input_names == ["input", "labels"]
    assert model.output_names == ["logits", "loss"]
    state = model.state
    assert sorted(state) == sorted([*trainer.signature.weights, *trainer.signature.momenta])
    where = {n: a.ctypes.data for n, a in state.items()}
    first = {n: a.copy() for n, a in state.items()}
    for x, y in _batches(3, 4):
        trainer.step(x, y)
    assert {n: a.ctypes.data for n, a in model.state.items()} == where
    for name in trainer.signature.weights:  # the arrays held from before moved
        assert not np.array_equal(state[name], first[name]), name
    for name in trainer.signature.momenta:  # off zero, in place
        assert np.any(state[name] != 0), name
    fresh = {n: a.copy() for n, a in model.state.items()}
    for name, w in trainer.weights.items():  # what `weights` reads (in ONNX layout)
        assert w.size == fresh[name].size and set(w.ravel()) == set(fresh[name].ravel())


def test_the_step_program_writes_each_weight_once_and_copies_none() -> None:
    """In the planned instruction IR (interpreter: what it runs): every trained weight and
    momentum is a mutable weight with a value, written by exactly one instruction, which
    is no copy; nothing copies from it either."""
    trainer = glow_mlir.train(model_zoo.digits_cnn(), learning_rate=0.1, momentum=0.9,
                              l2=1e-3, batch_size=2, backend="interpreter", cache=False)
    fn = next(op for op in trainer.model.module.walk() if isinstance(op, glow_ir.FuncOp))
    states = {w.sym_name.data: arg for w, arg in fn.weight_values() if w.is_state}
    assert sorted(states) == sorted([*trainer.signature.weights, *trainer.signature.momenta])
    writers: dict[str, list] = {n: [] for n in states}
    for op in fn.body.walk():
        if not isinstance(op, glow_ir.InstrOp):
            continue
        for value, kind in op.accesses():
            root = glow_ir.root_buffer(value)
            for name, arg in states.items():
                if root is arg:
                    assert not isinstance(op, glow_ir.CopyOp), (name, str(op))
                    if kind.writes:
                        writers[name].append(op)
    assert all(len(ops) == 1 for ops in writers.values()), writers


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_two_trainers_of_one_model_are_independent(backend: str) -> None:
    model = model_zoo.digits_cnn()
    a = glow_mlir.train(model, learning_rate=0.1, momentum=0.9, batch_size=4,
                        backend=backend, cache=False)
    b = glow_mlir.train(model, learning_rate=0.1, momentum=0.9, batch_size=4,
                        backend=backend, cache=False)
    batches = list(_batches(3, 4))
    losses_a = [a.step(x, y) for x, y in batches]
    initial = _initializers(model)
    for name, w in b.weights.items():  # a's steps left b's weights as they were
        np.testing.assert_array_equal(w, initial[name], err_msg=name)
    assert [b.step(x, y) for x, y in batches] == losses_a
    for name, w in b.weights.items():
        np.testing.assert_array_equal(w, a.weights[name], err_msg=name)


def test_the_exported_model_computes_with_the_trained_weights() -> None:
    """After cpu steps, the exported model's logits on a batch give the loss the next step
    reports (computed before its update), and its initializers are the trained weights."""
    model = model_zoo.digits_cnn()
    trainer = glow_mlir.train(model, learning_rate=0.1, momentum=0.9, batch_size=8,
                              cache=False)
    for x, y in _batches(4, 8):
        trainer.step(x, y)
    exported = trainer.export()
    trained = _initializers(exported)
    initial = _initializers(model)
    for name, w in trainer.weights.items():
        np.testing.assert_array_equal(trained[name], w)
        assert not np.array_equal(w, initial[name]), name
    x, y = next(_batches(1, 8, seed=7))
    logits = glow_mlir.compile(exported, backend="cpu", input_shapes={"batch": 8},
                               cache=False)(x)[0].astype(np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    want = -log_p[np.arange(8), y].mean()
    assert abs(trainer.step(x, y) - want) <= 1e-5 * abs(want)


def test_traced_and_untraced_steps_agree() -> None:
    """A traced cpu step runs the same code on the same state: the same losses and
    weights, bit for bit."""
    model = model_zoo.digits_cnn()
    plain = glow_mlir.train(model, learning_rate=0.1, momentum=0.9, batch_size=4,
                            cache=False, num_threads=1)
    traced = glow_mlir.train(model, learning_rate=0.1, momentum=0.9, batch_size=4,
                             cache=False, num_threads=1, trace=True)
    for x, y in _batches(4, 4):
        assert plain.step(x, y) == traced.step(x, y)
    for name, w in plain.weights.items():
        np.testing.assert_array_equal(w, traced.weights[name])
    assert traced.model.trace["traceEvents"]


def test_a_model_with_state_is_not_saved(tmp_path) -> None:
    trainer = glow_mlir.train(model_zoo.digits_cnn(), batch_size=2, cache=False)
    with pytest.raises(SaveError, match=r"the model has state \(conv_w1, .*Trainer.export"):
        trainer.model.save(tmp_path / "step.glow")
    assert not (tmp_path / "step.glow").exists()


def test_a_model_without_state_has_none() -> None:
    model = glow_mlir.compile(model_zoo.digits_cnn(batch=1), backend="cpu", cache=False)
    assert model.state == {}


def test_a_model_with_state_compiles_and_runs_with_the_cache_on(tmp_path, capsys) -> None:
    """A training graph (its weights are state) skips the whole-model cache, which stores
    saved models (they carry no state): it compiles and runs, on the API and in glow-run,
    twice (the second compile is no cache hit either)."""
    import onnx

    from glow_mlir.tools import glow_compile, glow_run
    from tool_testing import in_process

    onnx.save(model_zoo.digits_cnn(), tmp_path / "digits.onnx")
    graph = tmp_path / "tg.mlir"
    code, _, err = in_process(glow_compile.main, capsys, tmp_path / "digits.onnx",
                              "--input-shape", "batch=2", "--emit", "training-graph",
                              "-o", graph)
    assert code == 0, err
    for _ in range(2):
        model = glow_mlir.compile(str(graph), backend="cpu")  # cache on: the default
        assert model.state and model.origin != "cache"
    x, y = next(_batches(1, 2))
    assert len(model.run({"input": x, "labels": y})) == 2  # the logits and the loss
    code, out, err = in_process(glow_run.main, capsys, graph)
    assert code == 0, err
    assert "output loss" in out
