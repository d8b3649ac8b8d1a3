"""README.md is the first thing a new user runs: its quick-start commands must name files,
extras and tools the project has, it must not point outside a clone, and its `glow_ir`
sample must be what glow-compile prints (it once showed `mutable input`, which no longer
exists)."""

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


def test_quick_start_names_what_exists():
    """Every word of the first shell block that names a file, an extra or one of our
    tools refers to something in the project."""
    commands = [c for line in code_blocks("sh")[0].splitlines()
                if not line.lstrip().startswith("#") for c in line.split("&&") if c.strip()]
    scripts = set(PYPROJECT["project"]["scripts"])
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    checked = 0
    for command in commands:
        words = shlex.split(command)
        if words[0] in {"glow-opt", "glow-compile", "glow-run"}:
            assert words[0] in scripts, command
        for word in words[1:]:
            extra = re.fullmatch(r"\.\[(\w+)\]", word)
            if extra:
                assert extra.group(1) in extras, command
                checked += 1
            elif re.search(r"\.(onnx|mlir|npz|py|toml)$", word) or "/" in word:
                if word.startswith(".venv"):  # made by the command itself
                    continue
                assert (ROOT / word).exists(), f"{word} (in `{command.strip()}`) does not exist"
                checked += 1
    assert checked >= 2  # the example model and the test extra at least


def test_no_link_leaves_the_project():
    """A clone has no `../shared` (the development workspace): the README stands alone."""
    assert "../" not in README


def test_the_glow_ir_sample_is_real_output(tmp_path, capsys):
    """Each line of the sample that is not abridged (`...`) appears in what
    `glow-compile examples/small_cnn.onnx --backend interpreter --emit instr` prints (the
    interpreter's program: the cpu's fuses the relus into the convolutions)."""
    from glow_mlir.tools import glow_compile

    sample = next(b for b in code_blocks("mlir") if "glow_ir.func @main declare" in b)
    out = tmp_path / "cnn.mlir"
    try:
        glow_compile.main([str(ROOT / "examples" / "small_cnn.onnx"), "--backend",
                           "interpreter", "--emit", "instr", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None), capsys.readouterr().err
    printed = {line.strip() for line in out.read_text().splitlines()}
    lines = [line.strip() for line in sample.splitlines()
             if line.strip() and "..." not in line and not line.strip().startswith("//")]
    assert len(lines) >= 8
    missing = [line for line in lines if line not in printed]
    assert not missing, missing
