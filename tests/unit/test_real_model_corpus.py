"""The real-model corpus (benchmarks/real_models.py): two of its models, exported from
PyTorch with nothing downloaded, give onnxruntime's numbers on the interpreter. Skipped
without the `torch` extra."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("onnxruntime")

import glow_mlir  # noqa: E402

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "real_models.py"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("real_models")


def _check_interpreter(real_models, cache, spec):
    [(name, model, inputs)] = list(real_models.corpus([spec], cache=cache))
    assert name == spec.name
    entry = real_models.export(spec, cache)  # cached now: the same files
    _, expected = real_models.load_data(entry)
    compiled = glow_mlir.compile(model, backend="interpreter")
    assert set(compiled.input_names) == set(inputs)
    got = compiled.run(inputs)
    errors = real_models.compare(got, expected)
    assert "mismatch" not in errors, errors
    assert errors["max_rel"] <= real_models.TOLERANCE, errors
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)


def test_names(real_models):
    names = real_models.list_names()
    assert {"squeezenet1_0", "resnet50", "vit_b_16", "bert", "distilbert", "gpt2"} <= set(names)
    assert len(names) == len(set(names))


def test_squeezenet(real_models, cache):
    _check_interpreter(real_models, cache, real_models.make_spec("squeezenet1_0"))


def test_bert_two_layers(real_models, cache):
    pytest.importorskip("transformers")
    spec = real_models.make_spec("bert", num_hidden_layers=2)
    assert spec.name == "bert@num_hidden_layers=2"
    _check_interpreter(real_models, cache, spec)


def test_without_torch_the_command_says_how_to_install(tmp_path):
    import subprocess

    # a `torch` package that fails to import stands for a missing one
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('No module named torch')\n")
    proc = subprocess.run([sys.executable, str(PATH), "--list"], capture_output=True, text=True,
                          env={"PYTHONPATH": str(tmp_path), "PATH": ""}, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert 'pip install -e ".[corpus]"' in proc.stderr and "whl/cpu" in proc.stderr


def test_a_check_compiles_cold_and_counts_the_workers_cpu(real_models, tmp_path, monkeypatch,
                                                          capsys):
    """The child of `--check` compiles with the compile cache off (its compile column is a
    cold compile, whatever an earlier run left in the cache) and its CPU seconds include
    the compile workers' (processes: `os.times()`'s children, not `process_time`); it
    times onnxruntime's run last, the yardstick of the "x ort" column."""
    import json

    import onnx

    from glow_mlir import model_zoo
    from glow_mlir.targets import compile_cache

    model = model_zoo.lenet()
    onnx.save(model, tmp_path / "m.onnx")
    x = np.random.default_rng(0).standard_normal((1, 1, 28, 28)).astype(np.float32)
    want = glow_mlir.compile(model, backend="interpreter").run({"input": x})
    np.savez(tmp_path / "m.npz", **{"in:input": x, "out:0": want[0]})
    monkeypatch.setenv(compile_cache.ENV_DIR, str(tmp_path / "cache"))
    cpu_seconds = real_models._cpu_seconds
    times = iter([10.0, 11.0, 20.0, 25.0, 30.0, 30.5, 40.0, 40.25])
    monkeypatch.setattr(real_models, "_cpu_seconds", lambda: next(times))
    real_models._child(str(tmp_path / "m.onnx"), str(tmp_path / "m.npz"), "cpu")
    records = [json.loads(line[2:]) for line in capsys.readouterr().out.splitlines()
               if line.startswith("@@")]
    assert [r["cpu"] for r in records if "cpu" in r] == [1.0, 5.0, 0.5, 0.25]
    assert records[-2]["max_rel"] <= real_models.TOLERANCE
    assert records[-1]["stage"] == "onnxruntime"
    assert real_models._fmt_ratio({"run_cpu_s": 0.5, "ort_run_cpu_s": 0.25}) == "2.0x"
    assert real_models._fmt_ratio({"run_cpu_s": 0.5}) == "-"
    assert not (tmp_path / "cache").exists()
    t = os.times()
    assert cpu_seconds() >= t.user + t.system + t.children_user + t.children_system


def test_steady_runs_alternate_and_keep_the_fastest(real_models, monkeypatch):
    """`--steady N`: N later runs of ours and onnxruntime's, alternating, the fastest CPU
    time of each; the table's steady column is their ratio and a closing line their
    geometric mean and how many are above 1.1."""
    import io

    calls = []
    times = iter([0, 3, 3, 4, 4, 6, 6, 8])  # ours 3 then 2, theirs 1 then 2
    monkeypatch.setattr(real_models.time, "thread_time", lambda: next(times))
    got = real_models._steady_times(lambda: calls.append("ours"),
                                    lambda: calls.append("ort"), 2)
    assert calls == ["ours", "ort", "ours", "ort"]
    assert (got["ours_cpu"], got["ort_cpu"]) == (2, 1)
    rows = [{"name": n, "checks": {"cpu": {"status": "ok", "steady_ratio": r}}}
            for n, r in (("a", 2.0), ("b", 0.5), ("c", 1.0))]
    out = io.StringIO()
    real_models.print_table(rows, ["cpu"], out)
    text = out.getvalue()
    assert "cpu steady" in text.splitlines()[0]
    assert "2.00" in text and "0.50" in text
    assert "geometric mean 1.00 over 3 models, 1 above 1.1" in text


@pytest.mark.parametrize("argv, message", [
    (["--steady", "-1", "--check", "cpu"], "expected a whole number"),
    (["--steady", "abc", "--check", "cpu"], "expected a whole number"),
    (["--steady", "2"], "--steady N times the runs of a --check BACKEND"),
])
def test_steady_needs_a_count_and_a_check(real_models, argv, message, capsys):
    """A negative or non-numeric count, or --steady without a check to time, is a usage
    error, not silently nothing."""
    try:
        code = real_models.main(["--only", "resnet18", *argv])
    except SystemExit as e:
        code = e.code
    assert code not in (0, None)
    assert message in capsys.readouterr().err
