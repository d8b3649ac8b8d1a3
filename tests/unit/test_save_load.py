"""Saving and loading compiled models (issue 14 item 5; README,
"Saving, loading and the compile cache"):
`model.save(path)`, `glow_mlir.load(path)`, `glow-compile --save`, `glow-run FILE.glow`.
A loaded model runs the saved code on the saved weights (bit-identical outputs), keeps
the input checks, and a file that is not ours, damaged, of another version or for
another CPU is a clear UserError each."""

import os
import struct
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime import saved_model, section_file
from glow_mlir.runtime.compiled_model import InputError
from glow_mlir.runtime.saved_model import IncompatibleModelError, SaveError
from glow_mlir.runtime.section_file import DamagedError, OtherFormatError, WrongKindError
from glow_mlir.targets import compile_cache
from glow_mlir.tools import glow_compile, glow_run
from onnx_testing import model_feeds
from tool_testing import in_process

SMALL_CNN = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx"

MODELS = {
    "mlp": model_zoo.mlp,
    "lenet": model_zoo.lenet,
    "resnet-like": lambda: model_zoo.resnet18(image=32, classes=10),  # ResNet-18's kernels
}


@pytest.mark.parametrize("name", MODELS)
def test_a_saved_model_loads_and_gives_bit_identical_outputs(name, tmp_path):
    model = glow_mlir.compile(MODELS[name](), backend="cpu", cache=False)
    feeds = model_feeds(model, seed=4)
    want = model.run(feeds)
    path = tmp_path / "m.glow"
    model.save(path)
    loaded = glow_mlir.load(path)
    assert loaded.origin == str(path) and loaded.module is None and loaded.backend == "cpu"
    got = loaded.run(feeds)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    for field in ("input_names", "input_shapes", "input_dtypes", "output_names",
                  "output_shapes", "memory"):
        assert getattr(loaded, field) == getattr(model, field), field
    assert saved_model.to_bytes(loaded) == path.read_bytes()  # it saves again, the same


def test_saving_does_not_copy_the_weights():
    """The file is written piece by piece, the constant area from where it lies: one
    buffer of the whole file took BERT-base's compile (which saves into the model cache)
    from 1.4 to 2.2 GiB of peak memory."""
    model = glow_mlir.compile(model_zoo.lenet(), backend="cpu", cache=False)
    constant = model.executor.areas.constant
    pieces = saved_model.to_pieces(model)
    assert any(np.shares_memory(np.frombuffer(p, np.uint8), constant) for p in pieces
               if len(p) >= 1024)
    assert b"".join(pieces) == bytes(saved_model.to_bytes(model))


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, dict, list]:
    """small_cnn saved, its inputs and outputs."""
    model = glow_mlir.compile(str(SMALL_CNN), backend="cpu", cache=False)
    path = tmp_path_factory.mktemp("saved") / "cnn.glow"
    model.save(path)
    feeds = model_feeds(model)
    return path, feeds, model.run(feeds)


def test_a_loaded_model_knows_its_thread_count(saved):
    """The manifest keeps the count the code was compiled for (`model.num_threads`; the
    saved fixture's is the default, the cores this process may use)."""
    from glow_mlir.backends.cpu import default_threads

    assert glow_mlir.load(saved[0]).num_threads == default_threads()


def test_a_loaded_model_checks_its_inputs(saved):
    path, feeds, _ = saved
    model = glow_mlir.load(path)
    (name,) = model.input_names
    with pytest.raises(InputError, match=r"input 'image' has shape 1x3x16x16.*expected shape "
                                         r"1x3x32x32"):
        model.run({name: np.zeros((1, 3, 16, 16), np.float32)})
    with pytest.raises(InputError, match="dtype float64"):
        model.run({name: feeds[name].astype(np.float64)})
    with pytest.raises(InputError, match="missing input 'image'"):
        model.run({})
    with pytest.raises(InputError, match="unknown input 'other'"):
        model.run({**feeds, "other": feeds[name]})
    with pytest.raises(InputError, match="takes 1 input"):
        model(feeds[name], feeds[name])
    assert "CompiledModel(backend='cpu', inputs=[image: 1x3x32x32 float32]" in repr(model)


def test_loading_imports_no_compiler(saved, tmp_path):
    """A saved model runs with numpy and llvmlite: no xDSL, no onnx, nothing compiled."""
    path, feeds, want = saved
    np.savez(tmp_path / "x.npz", **feeds)
    script = ("import sys, numpy as np, glow_mlir\n"
              "m = glow_mlir.load(sys.argv[1])\n"
              "np.save(sys.argv[3], m.run(dict(np.load(sys.argv[2])))[0])\n"
              "print(sorted({k.split('.')[0] for k in sys.modules} & {'xdsl', 'onnx'}))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "x.npz"),
                           str(tmp_path / "y.npy")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want[0])


def _rewrite(data: bytes, **manifest_changes) -> bytearray:
    """`data` with its manifest changed and its digest made right again."""
    manifest, sections = section_file.unpack(data, saved_model.MAGIC, saved_model.FORMAT,
                                             "x", "y")
    manifest.update(manifest_changes)
    for key in [k for k, v in manifest_changes.items() if v is None]:
        del manifest[key]
    return section_file.pack(saved_model.MAGIC, saved_model.FORMAT, manifest, sections)


def _bad_file(tmp_path: Path, saved_path: Path, how: str) -> Path:
    data = bytearray(saved_path.read_bytes())
    if how == "onnx":
        data = bytearray(SMALL_CNN.read_bytes())
    elif how == "empty":
        data = bytearray()
    elif how == "header-cut":
        data = data[:30]
    elif how == "truncated":
        data = data[:-100]
    elif how == "extra-bytes":
        data += b"\0" * 7
    elif how == "flipped-byte":
        data[len(data) // 2] ^= 0x01
    elif how == "other-format":
        struct.pack_into("<I", data, 8, saved_model.FORMAT + 1)
    elif how == "bad-manifest":
        data = _rewrite(bytes(data), network=None)
    path = tmp_path / f"{how}.glow"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how,error,message", [
    ("onnx", WrongKindError, "is an ONNX model, not a saved model: compile it"),
    ("empty", WrongKindError, "is not a glow-mlir saved model"),
    ("header-cut", DamagedError, "is truncated: 30 bytes"),
    ("truncated", DamagedError, "is truncated"),
    ("extra-bytes", DamagedError, "7 bytes after its end"),
    ("flipped-byte", DamagedError, "do not match their sha256 digest"),
    ("other-format", OtherFormatError, f"in format {saved_model.FORMAT + 1}; this "
                                       f"glow-mlir reads format {saved_model.FORMAT}"),
    ("bad-manifest", DamagedError, "its manifest field 'network' is missing"),
])
def test_a_bad_file_is_a_clear_error(saved, tmp_path, how, error, message):
    path = _bad_file(tmp_path, saved[0], how)
    with pytest.raises(error, match=message) as info:
        glow_mlir.load(path)
    assert isinstance(info.value, UserError) and f"'{path}'" in str(info.value)


@pytest.mark.parametrize("field,label", [("glow_mlir", "glow-mlir"), ("llvm", "LLVM")])
def test_a_file_of_another_version_is_refused(saved, tmp_path, monkeypatch, field, label):
    model = glow_mlir.load(saved[0])
    versions = compile_cache.versions()
    monkeypatch.setattr(compile_cache, "versions", lambda: {**versions, field: "0.0.1"})
    path = tmp_path / "old.glow"
    model.save(path)
    monkeypatch.undo()
    with pytest.raises(IncompatibleModelError,
                       match=f"saved by {label} 0.0.1; this is {label} {versions[field]}"):
        glow_mlir.load(path)


@pytest.mark.parametrize("backend", ["accel", "tpu"])
def test_code_of_a_backend_without_native_code_is_refused(saved, tmp_path, monkeypatch,
                                                           backend):
    """The manifest's backend is asked (`Backend.saves_code`): one without native code,
    or one this glow-mlir does not know, cannot have written it."""
    model = glow_mlir.load(saved[0])
    model.backend = backend
    monkeypatch.setattr(saved_model, "saves_code", lambda name: True)
    path = tmp_path / f"{backend}.glow"
    model.save(path)
    monkeypatch.undo()
    with pytest.raises(IncompatibleModelError, match=f"holds code of backend '{backend}', "
                                                     f"which this glow-mlir cannot load"):
        glow_mlir.load(path)


def test_code_for_features_this_cpu_lacks_is_refused(saved, monkeypatch):
    from glow_mlir.targets.cpu import engine

    name, features = engine.host_cpu()
    parts = features.split(",")
    last = max(i for i, f in enumerate(parts) if f.startswith("+"))
    lacking = parts[last][1:]  # pretend this CPU lacks the last feature it has
    parts[last] = f"-{lacking}"
    monkeypatch.setattr(engine, "host_cpu", lambda: ("older-cpu", ",".join(parts)))
    with pytest.raises(IncompatibleModelError, match=rf"CPU '{name}' with features this CPU "
                                                    rf"\('older-cpu'\) lacks: \+{lacking}"):
        glow_mlir.load(saved[0])


def test_code_for_another_architecture_is_refused(saved, monkeypatch):
    monkeypatch.setattr(llvm, "get_default_triple", lambda: "aarch64-unknown-linux-gnu")
    with pytest.raises(IncompatibleModelError, match="holds code for x86_64.*this host is "
                                                     "aarch64"):
        glow_mlir.load(saved[0])


def test_missing_files_and_folders_are_clear_errors(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        glow_mlir.load(tmp_path / "none.glow")
    with pytest.raises(UserError, match="it is a directory"):
        glow_mlir.load(tmp_path)


def test_only_native_code_is_saved(tmp_path, saved):
    model = glow_mlir.compile(str(SMALL_CNN), backend="interpreter")
    with pytest.raises(SaveError, match="backend 'interpreter' has none: compile it with "
                                        "backend='cpu'"):
        model.save(tmp_path / "i.glow")
    assert not (tmp_path / "i.glow").exists()
    with pytest.raises(UserError, match="cannot write"):
        glow_mlir.load(saved[0]).save(tmp_path / "missing" / "m.glow")


def test_bundles_from_a_cached_model_and_from_a_loaded_one(tmp_path, saved):
    """A model from the model cache has JIT code only; write_bundle compiles what it was
    made from again. One loaded from a file has no source: a clear error."""
    from glow_mlir.runtime.bundle import BundleError, write_bundle

    glow_mlir.compile(str(SMALL_CNN), backend="cpu")
    cached = glow_mlir.compile(str(SMALL_CNN), backend="cpu")
    assert cached.origin == "cache"
    info = write_bundle(cached, tmp_path / "b", "cnn")
    assert Path(info.object_file).stat().st_size > 0
    with pytest.raises(BundleError, match="loaded from .*give write_bundle the ONNX model"):
        write_bundle(glow_mlir.load(saved[0]), tmp_path / "c", "cnn")


# ---------------------------------------------------------------- the tools


def _outputs(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("output ")]


def test_glow_compile_save_then_glow_run(capsys, tmp_path):
    path, report = tmp_path / "cnn.glow", tmp_path / "r.json"
    code, _, err = in_process(glow_compile.main, capsys, SMALL_CNN, "--save", path,
                              "--memory-report", report)
    assert code == 0, err
    import json

    loaded = glow_mlir.load(path)
    assert json.loads(report.read_text())["constant_bytes"] == loaded.memory.constant_bytes
    code, out, err = in_process(glow_run.main, capsys, path, "--seed", 3)
    assert code == 0, err
    assert f"model: {path} (backend cpu, " in out  # and the count the code has
    code, want, err = in_process(glow_run.main, capsys, SMALL_CNN, "--seed", 3)
    assert code == 0, err
    assert _outputs(out) == _outputs(want) and len(_outputs(out)) == 1


def test_glow_run_takes_a_saved_model_with_its_own_backend_named(capsys, saved):
    """`--backend cpu` on a model saved for cpu was refused ('drop --backend')."""
    code, out, err = in_process(glow_run.main, capsys, saved[0], "--backend", "cpu")
    assert code == 0 and f"model: {saved[0]} (backend cpu, " in out, err


def test_glow_run_refuses_another_backend_for_a_saved_model(capsys, saved):
    code, _, err = in_process(glow_run.main, capsys, saved[0], "--backend", "interpreter")
    assert code == 1 and err == (
        f"glow-run: error: '{saved[0]}' is a saved model compiled for backend 'cpu'; it "
        f"cannot run on 'interpreter': drop --backend, or compile the ONNX model for "
        f"'interpreter'\n")


@pytest.mark.parametrize("args,message", [
    (["--input-shape", "image=1x3x8x8"], "drop --input-shape"),
    (["--compare-onnxruntime"], "drop --compare-onnxruntime"),
    (["--time-passes"], "drop --time-passes"),  # it compiles nothing to time
])
def test_glow_run_refuses_flags_a_saved_model_cannot_take(capsys, saved, args, message):
    code, _, err = in_process(glow_run.main, capsys, saved[0], *args)
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1


def test_glow_run_reports_a_bad_file_in_one_line(capsys, saved, tmp_path):
    path = _bad_file(tmp_path, saved[0], "truncated")
    code, _, err = in_process(glow_run.main, capsys, path)
    assert code == 1 and err.strip() == (
        f"glow-run: error: '{path}' is truncated: {path.stat().st_size} bytes, its header "
        f"says {saved[0].stat().st_size} (or that length is damaged)")


@pytest.mark.parametrize("args,message", [
    (["--emit", "llvm"], "--save writes the compiled model alone: give --emit"),
    (["--emit-bundle", "b"], "give --emit-bundle"),
    (["--backend", "accel"], "backend 'accel' has none"),
])
def test_glow_compile_save_refuses_what_does_not_go_with_it(capsys, tmp_path, args, message):
    out = tmp_path / "m.glow"
    code, _, err = in_process(glow_compile.main, capsys, SMALL_CNN, "--save", out, *args)
    assert code == 1 and message in err and not out.exists()


def test_glow_compile_save_into_a_missing_folder_fails_before_compiling(capsys, tmp_path):
    code, _, err = in_process(glow_compile.main, capsys, SMALL_CNN, "--save",
                              tmp_path / "no" / "m.glow", "--time-passes")
    assert code == 1 and "no folder" in err and "Compile timing report" not in err


def test_no_cache_flags_write_nothing(capsys, tmp_path):
    cache_dir = Path(os.environ[compile_cache.ENV_DIR])
    code, _, err = in_process(glow_run.main, capsys, SMALL_CNN, "--no-cache", "--time-passes")
    assert code == 0 and "cache hits" not in err and not cache_dir.exists()
    code, _, err = in_process(glow_compile.main, capsys, SMALL_CNN, "--save",
                              tmp_path / "m.glow", "--no-cache")
    assert code == 0 and not cache_dir.exists() and (tmp_path / "m.glow").exists()
    code, _, err = in_process(glow_run.main, capsys, SMALL_CNN, "--time-passes")
    assert code == 0 and "model cache misses" in err and cache_dir.exists()
    code, _, err = in_process(glow_compile.main, capsys, SMALL_CNN, "--save",
                              tmp_path / "m2.glow", "--time-passes")
    assert code == 0 and "model cache hits" in err
    assert (tmp_path / "m2.glow").read_bytes() == (tmp_path / "m.glow").read_bytes()


# ---------------------------------------------------------------- loading from memory


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "unaligned-view"])
def test_a_saved_model_loads_from_its_bytes(saved, kind):
    """A model fetched over a network loads without a file; the buffer is copied, so
    changing it afterwards changes nothing."""
    path, feeds, want = saved
    raw = path.read_bytes()
    source = {"bytes": lambda: raw, "bytearray": lambda: bytearray(raw),
              "memoryview": lambda: memoryview(bytearray(raw)),
              "unaligned-view": lambda: memoryview(bytearray(b"x" + raw))[1:]}[kind]()
    model = glow_mlir.load(source)
    assert model.origin == "memory" and model.module is None
    if not isinstance(source, bytes):
        source[len(source) // 2:] = bytes(len(source) - len(source) // 2)  # the weights
    np.testing.assert_array_equal(model.run(feeds)[0], want[0])
    assert saved_model.to_bytes(model) == raw


def test_bytes_that_are_not_a_saved_model_are_a_clear_error(saved):
    raw = saved[0].read_bytes()
    with pytest.raises(DamagedError, match=r"^the saved model given as bytearray "
                                           rf"\({len(raw) - 1} bytes\) is truncated"):
        glow_mlir.load(bytearray(raw[:-1]))
    with pytest.raises(WrongKindError, match="given as bytes .* is not a glow-mlir saved"):
        glow_mlir.load(str(saved[0]).encode())  # a path as bytes is not a path here


@pytest.mark.parametrize("source,name", [(3, "int"), (None, "NoneType"),
                                         ([b"GLOWMLIR"], "list"), (np.zeros(4), "ndarray")])
def test_load_of_something_else_is_a_type_error(source, name):
    with pytest.raises(TypeError, match=r"glow_mlir.load takes a saved model's path \(str "
                                        rf"or os.PathLike\) or its bytes .*, not {name}$"):
        glow_mlir.load(source)
