"""The persistent compile cache (issue 14 item 4): objects and whole models on disk, keyed
by what they are made from; bad entries rebuilt, never trusted; cache=False writes
nothing; an unwritable folder warns and compiles; processes share one folder safely.

Each test has its own cache folder (tests/conftest.py); `cache_dir` is that folder."""

import os
import re
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.runtime import model_cache
from glow_mlir.targets import compile_cache
from glow_mlir.targets.compile_cache import CacheWarning, CompileCache
from glow_mlir.targets.cpu import object_cache
from glow_mlir.targets.cpu.llvm_compile import CompileSpec
from onnx_testing import make_model, rand, run_onnxruntime

X = rand(1, 3, 8, 8, seed=3)


def _convnet(seed: int = 0, channels: int = 4):
    """Two equal convolutions (one shared kernel) and a relu: small, several kernels."""
    inits = {"w0": rand(channels, 3, 3, 3, seed=seed),
             "w1": rand(channels, channels, 3, 3, seed=seed + 1)}
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"]),
             helper.make_node("Conv", ["r0", "w1"], ["y"], pads=[1, 1, 1, 1])]
    return make_model(nodes, {"x": ((1, 3, 8, 8), np.float32)}, ["y"], inits)


@pytest.fixture
def cache_dir() -> Path:
    return Path(os.environ[compile_cache.ENV_DIR])


@pytest.fixture
def counted(capsys):
    """compile(model, **options) -> (model, the counters its verbose report printed)."""
    def run(model, **kwargs):
        capsys.readouterr()
        compiled = glow_mlir.compile(model, backend="cpu", verbose=True, **kwargs)
        report = capsys.readouterr().err
        counts = {}
        if "----Count----" in report:
            for line in report.split("----Count----", 1)[1].splitlines()[1:]:
                if line.strip():
                    n, name = line.split(None, 1)
                    counts[name] = int(n)
        return compiled, counts
    return run


def _entries(cache_dir: Path, kind: str) -> list[Path]:
    return sorted(p for p in (cache_dir / kind).rglob("*") if p.is_file())


def test_a_miss_then_a_hit_of_the_model_then_of_its_objects(cache_dir, counted):
    model = _convnet()
    first, counts = counted(model)
    assert first.origin == "compiled"
    objects = counts["object cache misses"]
    assert counts == {"model cache misses": 1, "object cache hits": 0,
                      "object cache misses": objects}
    assert objects == 1 + len(first.executor.entry.objects) >= 3  # entry + kernels
    assert len(_entries(cache_dir, "objects")) == objects
    assert len(_entries(cache_dir, "models")) == 1

    second, counts = counted(model)
    assert counts == {"model cache hits": 1}
    assert second.origin == "cache" and second.module is None
    (want,) = first.run({"x": X})
    (got,) = second.run({"x": X})
    np.testing.assert_array_equal(got, want)

    CompileCache(cache_dir).clear("models")  # the objects alone: compiled to LLVM IR, not to code
    third, counts = counted(model)
    assert counts == {"model cache misses": 1, "object cache hits": objects,
                      "object cache misses": 0}
    assert third.executor.entry.cache_hits == objects
    np.testing.assert_array_equal(third.run({"x": X})[0], want)
    np.testing.assert_allclose(want, run_onnxruntime(model, {"x": X})[0], rtol=1e-4, atol=1e-5)


def test_a_model_sharing_kernels_hits_them(cache_dir, counted):
    """Other weights, same shapes: the same kernel code (weights are never in it), another
    model; another channel count: other convolution kernels."""
    counted(_convnet(seed=0))
    _, counts = counted(_convnet(seed=5))
    assert counts["model cache misses"] == 1 and counts["object cache misses"] == 0
    _, counts = counted(_convnet(seed=0, channels=6))
    assert counts["object cache misses"] >= 2


def test_the_verbose_report_shows_hits_and_misses(capsys):
    glow_mlir.compile(_convnet(), verbose=True)
    err = capsys.readouterr().err
    assert "Compile timing report" in err and "model cache" in err
    assert "object cache misses" in err and "model cache misses" in err


def test_cache_false_writes_nothing_and_reads_nothing(cache_dir, counted):
    model = _convnet()
    compiled, counts = counted(model, cache=False)
    assert not cache_dir.exists() and counts == {}
    assert compiled.executor.entry.cache_hits == 0
    counted(model)  # now cached
    again, counts = counted(model, cache=False)
    assert again.origin == "compiled" and counts == {}


def test_object_keys_differ_with_the_spec_and_the_versions(monkeypatch):
    text = "define i32 @f(i32 %x) {\n  ret i32 %x\n}\n"
    spec = CompileSpec("x86-64", "+sse2,+avx2")
    key = object_cache.object_key(text, spec)
    assert object_cache.object_key(text, CompileSpec("x86-64", "+sse2,+avx2")) == key
    others = [object_cache.object_key(text + "\n", spec),
              object_cache.object_key(text, CompileSpec("x86-64", "+sse2,-avx2")),
              object_cache.object_key(text, CompileSpec("znver4", "+sse2,+avx2")),
              object_cache.object_key(text, CompileSpec("x86-64", "+sse2,+avx2",
                                                        loop_unrolling=True)),
              object_cache.object_key(text, CompileSpec("x86-64", "+sse2,+avx2", reloc="pic"))]
    for field in ("glow_mlir", "llvm", "llvmlite"):
        changed = {**compile_cache.versions(), field: "0.0.0-other"}
        monkeypatch.setattr(object_cache, "_environment",
                            lambda changed=changed: {**changed, "triple": "t", "compiler": "c"})
        others.append(object_cache.object_key(text, spec))
    assert len({key, *others}) == 1 + len(others)


def test_model_keys_differ_with_the_options_the_host_and_the_sources(monkeypatch, tmp_path):
    from glow_mlir.targets.cpu import jit

    model = _convnet()
    base = dict(backend="cpu", input_shapes=None, optimize=True, disable_passes=(),
                backend_options={})
    key = model_cache.model_key(model, **base)
    assert key is not None and model_cache.model_key(_convnet(), **base) == key
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString(deterministic=True))
    assert model_cache.model_key(str(path), **base) == key  # a path: the file's bytes
    variants = [model_cache.model_key(_convnet(seed=1), **base),
                model_cache.model_key(model, **{**base, "optimize": False}),
                model_cache.model_key(model, **{**base, "input_shapes": {"x": (1, 3, 8, 8)}}),
                model_cache.model_key(model, **{**base, "disable_passes": ("cse",)})]
    monkeypatch.setattr(jit, "TARGET", ("x86-64", "+sse2,-avx2"))  # what the JIT compiles for
    variants.append(model_cache.model_key(model, **base))
    monkeypatch.undo()
    monkeypatch.setattr(model_cache, "sources_digest", lambda: "another compiler")
    variants.append(model_cache.model_key(model, **base))
    assert None not in variants and len({key, *variants}) == 1 + len(variants)
    # Not cached: a backend without native code; a file that cannot be read.
    assert model_cache.model_key(model, **{**base, "backend": "interpreter"}) is None
    assert model_cache.model_key(str(tmp_path / "missing.onnx"), **base) is None


def test_a_changed_model_file_is_a_miss(tmp_path, counted):
    path = tmp_path / "m.onnx"
    path.write_bytes(_convnet(seed=0).SerializeToString())
    first, _ = counted(str(path))
    path.write_bytes(_convnet(seed=9).SerializeToString())
    second, counts = counted(str(path))
    assert counts["model cache misses"] == 1 and second.origin == "compiled"
    assert not np.array_equal(first.run({"x": X})[0], second.run({"x": X})[0])


def test_external_data_files_are_part_of_the_key(tmp_path, counted):
    """A model whose weights live in a side file: changing that file is a miss, though
    the .onnx file is unchanged; the locations are read from the protobuf as onnx does."""
    import onnx
    from onnx import external_data_helper

    path = tmp_path / "m.onnx"
    onnx.save_model(_convnet(), str(path), save_as_external_data=True, location="w.bin",
                    size_threshold=0)
    proto = onnx.load_model(str(path), load_external_data=False)
    want = [external_data_helper.ExternalDataInfo(t).location for t in proto.graph.initializer
            if external_data_helper.uses_external_data(t)]
    assert model_cache.external_data_locations(path.read_bytes()) == want == ["w.bin", "w.bin"]
    assert model_cache.external_data_locations(b"\xff\xff\xff") is None  # not a message
    before, _ = counted(str(path))
    weights = tmp_path / "w.bin"
    data = np.frombuffer(weights.read_bytes(), np.float32) * 2
    weights.write_bytes(data.tobytes())
    after, counts = counted(str(path))
    assert counts["model cache misses"] == 1
    np.testing.assert_allclose(after.run({"x": X})[0],
                               run_onnxruntime(onnx.load_model(str(path)), {"x": X})[0],
                               rtol=1e-4, atol=1e-5)
    assert not np.array_equal(before.run({"x": X})[0], after.run({"x": X})[0])


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[:len(data) // 2]
    elif how == "corrupt":
        data[-1] ^= 0xFF
    elif how == "other-format":
        struct.pack_into("<I", data, 8, compile_cache.FORMAT + 1)
    elif how == "other-key":
        data[12] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "corrupt", "other-format", "other-key"])
def test_bad_object_entries_are_rebuilt_and_the_code_is_right(cache_dir, how, counted):
    model = _convnet()
    (want,) = counted(model)[0].run({"x": X})
    CompileCache(cache_dir).clear("models")
    objects = _entries(cache_dir, "objects")
    for path in objects[:2]:
        _damage(path, how)
    compiled, counts = counted(model)
    assert counts["object cache misses"] == 2
    assert counts["cache entries found bad and rebuilt"] == 2
    np.testing.assert_array_equal(compiled.run({"x": X})[0], want)
    CompileCache(cache_dir).clear("models")
    _, counts = counted(model)  # rebuilt entries are whole again
    assert counts["object cache misses"] == 0


@pytest.mark.parametrize("how", ["truncated", "corrupt", "other-format"])
def test_a_bad_model_entry_is_compiled_again(cache_dir, how, counted):
    model = _convnet()
    (want,) = counted(model)[0].run({"x": X})
    (entry,) = _entries(cache_dir, "models")
    _damage(entry, how)
    compiled, counts = counted(model)
    assert counts["model cache misses"] == 1 and compiled.origin == "compiled"
    np.testing.assert_array_equal(compiled.run({"x": X})[0], want)
    assert counted(model)[0].origin == "cache"


def test_a_bad_pool_setting_is_the_users_error_not_a_bad_entry(cache_dir, monkeypatch,
                                                              counted):
    """A bad GLOW_POOL_LINGER_MS shows when a cached model's code is linked: it is reported
    (a SettingError naming it), the entry is kept, and it was not taken for a damaged one
    and compiled again (which used to hide the error)."""
    from glow_mlir.ir.errors import SettingError
    from glow_mlir.targets.cpu import thread_pool

    model = _convnet()
    counted(model)
    (entry,) = _entries(cache_dir, "models")
    monkeypatch.setenv(thread_pool.ENV_LINGER, "abc")
    with pytest.raises(SettingError, match="GLOW_POOL_LINGER_MS='abc'"):
        glow_mlir.compile(model, backend="cpu")
    assert _entries(cache_dir, "models") == [entry]
    monkeypatch.delenv(thread_pool.ENV_LINGER)
    assert counted(model)[0].origin == "cache"


def test_a_model_entry_of_another_version_is_compiled_again(cache_dir, monkeypatch, counted):
    """The key holds the versions, so another version's entry is another file; one that
    claims another version under this key (a hand-made or stale file) is not trusted."""
    from glow_mlir.runtime import saved_model

    model = _convnet()
    counted(model)
    (entry,) = _entries(cache_dir, "models")
    key = bytes.fromhex(entry.name)
    payload = bytes(CompileCache(cache_dir).get("models", key))
    restored = saved_model.from_bytes(payload)
    versions = compile_cache.versions()
    monkeypatch.setattr(compile_cache, "versions", lambda: {**versions, "llvm": "1.0.0"})
    other = saved_model.to_bytes(restored)  # the same model, labelled LLVM 1.0.0
    monkeypatch.undo()
    CompileCache(cache_dir).put("models", key, other)
    compiled, counts = counted(model)
    assert counts["model cache misses"] == 1 and compiled.origin == "compiled"


def test_an_unwritable_cache_folder_warns_once_and_compiles(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(compile_cache.ENV_DIR, str(blocker / "cache"))
    model = _convnet()
    with pytest.warns(CacheWarning, match="cannot write the glow-mlir compile cache"):
        compiled = glow_mlir.compile(model)
    np.testing.assert_allclose(compiled.run({"x": X})[0],
                               run_onnxruntime(model, {"x": X})[0], rtol=1e-4, atol=1e-5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        glow_mlir.compile(_convnet(seed=1))
    assert not [w for w in caught if issubclass(w.category, CacheWarning)]  # once only


def test_the_default_folder_is_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(compile_cache.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.default_directory() == tmp_path / "xdg" / "glow-mlir"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compile_cache.default_directory() == tmp_path / "home" / ".cache" / "glow-mlir"


def test_the_size_bound_evicts_the_least_recently_used(tmp_path, monkeypatch):
    cache = CompileCache(tmp_path, max_bytes=3 * (compile_cache.PAYLOAD_AT + 100))
    keys = [bytes([i]) * 32 for i in range(4)]
    for i, key in enumerate(keys[:3]):
        cache.put("objects", key, bytes([i]) * 100)
        os.utime(cache._path("objects", key), (1000 + i, 1000 + i))
    assert cache.trim() == 0  # at the bound, not over it
    assert cache.get("objects", keys[0]) is not None  # used now: the newest
    cache.put("objects", keys[3], b"3" * 100)
    assert cache.trim() == 2  # down to 90%: entries 1 and 2, the least recently used
    assert [cache.get("objects", k) is not None for k in keys] == [True, False, False, True]
    monkeypatch.setenv(compile_cache.ENV_SIZE_MB, "1.5")
    assert CompileCache(tmp_path).max_bytes == 3 << 19
    monkeypatch.setenv(compile_cache.ENV_SIZE_MB, "lots")
    with pytest.warns(CacheWarning, match="GLOW_MLIR_CACHE_SIZE_MB"):
        assert CompileCache(tmp_path).max_bytes == compile_cache.DEFAULT_SIZE_MB << 20


HAMMER = """
import sys
from glow_mlir.targets.compile_cache import CompileCache
cache = CompileCache(sys.argv[1])
payloads = [bytes([i]) * (100_000 + i) for i in range(8)]
bad = 0
for n in range(300):
    i = n % 8
    key = bytes([i]) * 32
    cache.put("objects", key, payloads[i])
    got = cache.get("objects", key)
    bad += got is None or bytes(got) != payloads[i]
print(bad, cache.rebuilt)
"""


def _python(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def test_two_processes_writing_the_same_entries_never_see_half_of_one(tmp_path):
    procs = [_python(HAMMER, str(tmp_path)) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert out.split() == ["0", "0"]  # every read whole; no entry found bad
    assert not [p for p in tmp_path.rglob(".tmp-*")]


COMPILE = """
import sys, numpy as np, onnx, glow_mlir
model = glow_mlir.compile(onnx.load_model(sys.argv[1]), backend="cpu")
np.save(sys.argv[2], model.run({"x": np.load(sys.argv[3])})[0])
"""


def test_two_processes_compiling_into_one_folder(cache_dir, tmp_path, counted):
    model = _convnet()
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    np.save(tmp_path / "x.npy", X)
    procs = [_python(COMPILE, str(path), str(tmp_path / f"y{i}.npy"), str(tmp_path / "x.npy"))
             for i in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    want = run_onnxruntime(model, {"x": X})[0]
    for i in range(2):
        np.testing.assert_allclose(np.load(tmp_path / f"y{i}.npy"), want, rtol=1e-4, atol=1e-5)
    compiled, counts = counted(model)  # what they left is whole
    assert counts == {"model cache hits": 1} and compiled.origin == "cache"
    CompileCache(cache_dir).clear("models")
    _, counts = counted(model)
    assert counts["object cache misses"] == 0
    assert "cache entries found bad and rebuilt" not in counts


COUNTS = """
import sys, glow_mlir
glow_mlir.compile(sys.argv[1], backend="cpu", verbose=True)
"""


def test_another_process_hits_every_object(cache_dir, tmp_path):
    """The IR texts are the same in every process: xDSL lists fast-math flags from a set,
    whose order follows PYTHONHASHSEED (seeds 1 and 2 gave two texts of small_cnn)."""
    path = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx"
    reports = []
    for seed in ("1", "2"):
        CompileCache(cache_dir).clear("models")
        proc = subprocess.run([sys.executable, "-c", COUNTS, str(path)], capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=600)
        assert proc.returncode == 0, proc.stderr
        reports.append(proc.stderr)
    assert re.search(r"\s0  object cache hits", reports[0])
    assert re.search(r"\s0  object cache misses", reports[1]), reports[1]


WARM = """
import sys, glow_mlir
model = glow_mlir.compile(sys.argv[1], backend="cpu")
print(model.origin, sorted({k.split(".")[0] for k in sys.modules} & {"xdsl", "onnx"}))
"""


def test_a_model_cache_hit_imports_no_compiler(tmp_path):
    """The key is the file's bytes: a hit neither imports the model nor the compiler."""
    path = tmp_path / "m.onnx"
    path.write_bytes(_convnet().SerializeToString())
    outs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", WARM, str(path)], capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout.strip())
    assert outs == ["compiled ['onnx', 'xdsl']", "cache []"]
