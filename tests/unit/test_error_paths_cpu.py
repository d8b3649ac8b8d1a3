"""Bad input to the cpu backend, its bundle writer, `CompiledModel` and `glow-compile`:
each error path gives its message (and the CLI exits 1 without a traceback)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from glow_mlir.ir.errors import UserError
from glow_mlir.runtime import bundle
from glow_mlir.runtime.compiled_model import CompiledModel, InputError
from glow_mlir.tools import glow_compile
from test_tools_run_compile import EXAMPLE, in_process


def _cli_error(capsys, *args) -> str:
    code, _, err = in_process(glow_compile.main, capsys, *args)
    assert code == 1
    assert "Traceback" not in err
    return err


def test_cli_network_name_without_bundle(capsys):
    err = _cli_error(capsys, EXAMPLE, "--network-name", "net")
    assert "--network-name names a bundle: give --emit-bundle DIR too" in err


def test_cli_bundle_on_accel(tmp_path, capsys):
    err = _cli_error(capsys, EXAMPLE, "--backend", "accel", "--emit-bundle", tmp_path / "b")
    assert "--emit-bundle writes the cpu backend's code" in err


def test_cli_accel_report_is_not_for_the_cpu_backend(tmp_path, capsys):
    err = _cli_error(capsys, EXAMPLE, "--backend", "cpu", "--accel-report", tmp_path / "r.json")
    assert "--emit accel and --accel-report are the accel backend's" in err


def test_cli_no_bundle_for_the_accel_backend(tmp_path, capsys):
    err = _cli_error(capsys, EXAMPLE, "--emit-bundle", tmp_path / "b", "--emit", "accel")
    assert "the accel backend has no bundles" in err


def test_cli_reserved_network_name(tmp_path, capsys):
    err = _cli_error(capsys, EXAMPLE, "--emit-bundle", tmp_path / "b", "--network-name", "int")
    assert "network name 'int' is reserved in C" in err


def test_cli_unwritable_output(tmp_path, capsys):
    err = _cli_error(capsys, EXAMPLE, "--emit", "graph", "-o", tmp_path / "missing" / "x.mlir")
    assert "cannot write '" in err


@pytest.mark.parametrize("name", ["main", "while"])
def test_bundle_reserved_names(name):
    with pytest.raises(bundle.BundleError, match=f"network name '{name}' is reserved in C"):
        bundle.check_network_name(name)


def test_bundle_write_error(tmp_path):
    with pytest.raises(bundle.BundleError, match="cannot write '"):
        bundle._write(tmp_path, b"x")  # a directory, not a file


def test_compiled_model_without_function():
    with pytest.raises(UserError, match="the module has no function to run"):
        CompiledModel(ModuleOp([]))


def test_compiled_model_inputs_not_a_dict():
    model = glow_compile_model()
    with pytest.raises(InputError, match="inputs must be a dict of name -> array, got list"):
        model.check_inputs([np.zeros(1)])


def glow_compile_model():
    from glow_mlir.runtime.compiled_model import compile_model

    return compile_model(str(Path(EXAMPLE)))
