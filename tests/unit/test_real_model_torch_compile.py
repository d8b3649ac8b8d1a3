"""`benchmarks/real_models.py --check torch-compile`: corpus models (small configurations)
run under `torch.compile(m, backend="glow")` give eager's outputs, with their graphs, graph
breaks, partitions and ops counted; a failure is one line; the table shows the counts."""

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "real_models.py"


def _spec(real_models, name):
    if name == "resnet18":
        pytest.importorskip("torchvision")
        return real_models._torchvision_spec("resnet18", image=(1, 3, 32, 32))
    pytest.importorskip("transformers")
    return real_models.make_spec(name, small=True)


@pytest.fixture
def glow_backend():
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("name", ["resnet18", "distilbert", "gpt2"])
def test_compiled_corpus_model_equals_eager(real_models, glow_backend, name):
    result = real_models.torch_compile_check(_spec(real_models, name))
    assert "mismatch" not in result, result
    assert result["max_rel"] <= real_models.TOLERANCE, result
    # equal to eager because glow ran it, not because everything fell back to eager
    assert result["graphs"] >= 1 and result["partitions"] >= 1
    assert result["ops_glow"] > 0 and result["glow_calls"] > 0
    assert result["eager_calls"] == 0 and result["compile_failures"] == []
    assert result["graph_breaks"] == 0
    assert result["run_ratio"] > 0 and result["compile_cpu_s"] > 0


def _broken_spec(real_models):
    """A model with a graph break in the middle: dynamo gives the backend two graphs."""
    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 4)

        def forward(self, x):
            y = torch.tanh(self.a(x)) * 3
            torch._dynamo.graph_break()
            return (torch.relu(self.b(y)) + 1,)

    def build():
        torch.manual_seed(0)
        return Broken().eval(), {"x": torch.randn(3, 8)}

    return real_models.ModelSpec("broken", "transformers", build, ("y",))


def test_a_graph_break_is_counted_and_shown(real_models, glow_backend):
    result = real_models.torch_compile_check(_broken_spec(real_models))
    assert result["graph_breaks"] == 1 and result["graphs"] == 2
    assert result["partitions"] == 2 and result["max_rel"] <= real_models.TOLERANCE
    out = io.StringIO()
    row = {"name": "broken", "checks": {"torch-compile": {**result, "status": "ok"}}}
    real_models.print_compile_table([row], out)
    lines = out.getvalue().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("model"))
    columns = [c.strip() for c in lines[head].split("  ") if c.strip()]
    values = lines[head + 2].split()
    cells = dict(zip(columns, values))
    assert cells["graphs"] == "2" and cells["breaks"] == "1" and cells["parts"] == "2"
    assert "1 graph break(s) in all" in out.getvalue()


def test_a_failure_says_why_in_one_line(real_models, glow_backend):
    """dynamo wraps the backend's error in a long message; the innermost one's first line."""
    with pytest.raises(Exception) as info:
        real_models.torch_compile_check(_broken_spec(real_models), options={"backend": "tpu"})
    message = real_models._compile_error(info.value)
    assert message == ("TorchBackendError: the glow torch.compile backend runs on 'cpu' or "
                       "'interpreter', not 'tpu'")


def test_the_command_goes_on_after_a_model_over_its_time_limit():
    """Each model in a child process under a limit of CPU time: over it, the row says where
    it stopped, and the next model is still checked."""
    pytest.importorskip("torchvision")
    proc = subprocess.run(
        [sys.executable, str(PATH), "--only", "resnet18", "alexnet", "--check", "torch-compile",
         "--time-limit", "1"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("resnet18", "alexnet"))]
    # a loaded machine may reach the wall-time limit (4x) first
    assert len(rows) == 2 and all(
        "TIMEOUT" in r and re.search(r"over (1 s of CPU|4 s of wall) time in \w+", r)
        for r in rows), proc.stdout
    assert "Traceback" not in proc.stdout
