"""AOT bundles (`glow-compile --emit-bundle`): a C program links NET.o, loads
NET.weights.bin, runs the network and matches onnxruntime."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.bundle import (
    check_network_name,
    default_network_name,
    sanitize_identifier,
    weights_text,
    write_bundle,
)

ROOT = Path(__file__).resolve().parents[2]
SMALL_CNN = ROOT / "examples" / "small_cnn.onnx"
CC = shutil.which("cc") or shutil.which("gcc")

MAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "@NET@.h"

#ifdef STACK_BYTES /* the network runs on a thread with a stack of STACK_BYTES */
#include <pthread.h>
struct call { uint8_t *constant, *mutable_, *activations; int status; };
static void *call_network(void *p) {
  struct call *k = p;
  k->status = @NET@(k->constant, k->mutable_, k->activations);
  return NULL;
}
#endif

static size_t rounded(size_t n) { /* aligned_alloc wants a multiple of the alignment */
  return n == 0 ? @P@_MEM_ALIGN : (n + @P@_MEM_ALIGN - 1) / @P@_MEM_ALIGN * @P@_MEM_ALIGN;
}

static int read_file(const char *path, uint8_t *dst, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return 1;
  size_t got = fread(dst, 1, n, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  return got != n || extra;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;  /* weights.bin input.bin output.bin */
  uint8_t *constant = aligned_alloc(@P@_MEM_ALIGN, rounded(@P@_CONSTANT_MEM_SIZE));
  uint8_t *mutable_ = aligned_alloc(@P@_MEM_ALIGN, rounded(@P@_MUTABLE_MEM_SIZE));
  uint8_t *activations = aligned_alloc(@P@_MEM_ALIGN, rounded(@P@_ACTIVATIONS_MEM_SIZE));
  if (!constant || !mutable_ || !activations) return 3;
  memset(mutable_, 0, rounded(@P@_MUTABLE_MEM_SIZE));
  if (read_file(argv[1], constant, @P@_CONSTANT_MEM_SIZE)) return 4;
  if (read_file(argv[2], mutable_ + @INPUT@, @INPUT_SIZE@)) return 5;
#ifdef STACK_BYTES
  struct call k = {constant, mutable_, activations, -1};
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, STACK_BYTES) ||
      pthread_create(&thread, &attr, call_network, &k) || pthread_join(thread, NULL))
    return 8;
  if (k.status != 0) return 6;
#else
  if (@NET@(constant, mutable_, activations) != 0) return 6;
#endif
  FILE *out = fopen(argv[3], "wb");
  if (!out || fwrite(mutable_ + @OUTPUT@, 1, @OUTPUT_SIZE@, out) != @OUTPUT_SIZE@) return 7;
  fclose(out);
  free(constant); free(mutable_); free(activations);
  return 0;
}
"""


def _onnxruntime(model_path: Path, x: np.ndarray) -> np.ndarray:
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def _build_program(info, tmp: Path, flags=()) -> Path:
    (inp,), (out,) = info.inputs, info.outputs
    src = (MAIN_C.replace("@NET@", info.network_name)
           .replace("@P@", info.network_name.upper())
           .replace("@INPUT@", inp.macro).replace("@INPUT_SIZE@", str(inp.size))
           .replace("@OUTPUT@", out.macro).replace("@OUTPUT_SIZE@", str(out.size)))
    main_c = tmp / "main.c"
    main_c.write_text(src)
    exe = tmp / "run_bundle"
    subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-I", str(info.directory),
                    *flags, str(main_c), str(info.object_file), "-lm", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


def _run_bundle(info, exe: Path, x: np.ndarray, tmp: Path, wrapper=()) -> np.ndarray:
    (out,) = info.outputs
    x_path, y_path = tmp / "input.bin", tmp / "output.bin"
    x_path.write_bytes(np.ascontiguousarray(x, np.float32).tobytes())
    proc = subprocess.run([*wrapper, str(exe), str(info.weights_bin), str(x_path),
                           str(y_path)], capture_output=True, text=True)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    return np.frombuffer(y_path.read_bytes(), np.float32).reshape(out.shape)


def _header_defines(path: Path) -> dict[str, int]:
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^#define (\w+)\s+(\d+)$", path.read_text(), re.M)}


def _check_files(info) -> None:
    defines = _header_defines(info.header)
    p = info.network_name.upper()
    assert defines[f"{p}_CONSTANT_MEM_SIZE"] == info.weights_bin.stat().st_size
    assert defines[f"{p}_CONSTANT_MEM_SIZE"] == info.constant_size
    assert defines[f"{p}_MUTABLE_MEM_SIZE"] == info.mutable_size
    assert defines[f"{p}_ACTIVATIONS_MEM_SIZE"] == info.activations_size
    assert defines[f"{p}_MEM_ALIGN"] == 64
    for ph in info.inputs + info.outputs:
        assert defines[ph.macro] == ph.offset
        assert ph.offset % 64 == 0 and ph.offset + ph.size <= info.mutable_size
    text = info.header.read_text()
    assert "#include <stdint.h>" in text and 'extern "C"' in text
    assert (f"int {info.network_name}(uint8_t *constantWeight, uint8_t *mutableWeight, "
            f"uint8_t *activations);") in text
    # The text weights are the binary ones, as Glow writes them.
    body = info.weights_txt.read_text()
    values = bytes(int(v, 16) for v in re.findall(r"0X([0-9A-F]{2}),", body))
    assert values == info.weights_bin.read_bytes()


@pytest.fixture(scope="module")
def lenet_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lenet") / "lenet.onnx"
    onnx.save(model_zoo.lenet(), str(path))
    return path


@pytest.mark.parametrize("which", ["small_cnn", "lenet"])
def test_bundle_runs_from_c(which, tmp_path, lenet_path):
    if CC is None:
        pytest.skip("no C compiler")
    model = SMALL_CNN if which == "small_cnn" else lenet_path
    info = write_bundle(model, tmp_path / "bundle", f"{which}_net")
    _check_files(info)
    exe = _build_program(info, tmp_path)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(info.inputs[0].shape).astype(np.float32)
    got = _run_bundle(info, exe, x, tmp_path)
    np.testing.assert_allclose(got, _onnxruntime(model, x), rtol=1e-4, atol=1e-5)


def test_bundle_runs_on_a_small_thread_stack(tmp_path):
    """The bundle needs no memory beyond the header's three areas: the convolutions'
    im2col scratch (~160 KiB of stack frame for this CNN before) is in the activation
    area, so a call on a thread with a 128 KiB stack works and matches the JIT and
    onnxruntime."""
    import glow_mlir

    if CC is None:
        pytest.skip("no C compiler")
    model = glow_mlir.compile(str(SMALL_CNN), backend="cpu")
    info = write_bundle(model, tmp_path / "bundle", "cnn")
    exe = _build_program(info, tmp_path, ("-DSTACK_BYTES=131072", "-pthread"))
    x = np.random.default_rng(3).standard_normal(info.inputs[0].shape).astype(np.float32)
    got = _run_bundle(info, exe, x, tmp_path)
    (jit_out,) = model(x)
    np.testing.assert_allclose(got, jit_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, _onnxruntime(SMALL_CNN, x), rtol=1e-4, atol=1e-5)


def test_bundle_weights_txt_includes_as_c_array(tmp_path):
    """NET.weights.txt is the body of an initializer list (Glow's format)."""
    if CC is None:
        pytest.skip("no C compiler")
    info = write_bundle(SMALL_CNN, tmp_path, "cnn")
    main_c = tmp_path / "inc.c"
    main_c.write_text(
        '#include <stdio.h>\n#include "cnn.h"\n'
        "static uint8_t w[CNN_CONSTANT_MEM_SIZE] __attribute__((aligned(CNN_MEM_ALIGN))) = {\n"
        '#include "cnn.weights.txt"\n};\n'
        "int main(void) { fwrite(w, 1, sizeof w, stdout); return 0; }\n")
    exe = tmp_path / "inc"
    subprocess.run([CC, "-I", str(tmp_path), str(main_c), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, check=True).stdout
    assert out == info.weights_bin.read_bytes()


def test_bundle_under_valgrind(tmp_path):
    if CC is None or shutil.which("valgrind") is None or platform.machine() != "x86_64":
        pytest.skip("needs a C compiler, valgrind and an x86-64 host")
    # For a generic x86-64 CPU: valgrind does not know AVX-512.
    info = write_bundle(SMALL_CNN, tmp_path / "bundle", "cnn", cpu="x86-64")
    exe = _build_program(info, tmp_path)
    x = np.random.default_rng(1).standard_normal(info.inputs[0].shape).astype(np.float32)
    got = _run_bundle(info, exe, x, tmp_path,
                      wrapper=("valgrind", "-q", "--error-exitcode=1"))
    np.testing.assert_allclose(got, _onnxruntime(SMALL_CNN, x), rtol=1e-4, atol=1e-5)


def test_names():
    assert sanitize_identifier("gpu_0/data:0") == "gpu_0_data_0"
    assert sanitize_identifier("1st") == "_1st"
    assert default_network_name("/m/small-cnn.v2.onnx") == "small_cnn_v2"
    assert default_network_name("main.onnx") == "main_net"
    assert check_network_name("resnet50") == "resnet50"
    for bad in ("1net", "my-net", "", "int", "main", "a b"):
        with pytest.raises(UserError):
            check_network_name(bad)
    assert weights_text(bytes(range(21))).splitlines()[1] == " 0X14,"


def test_header_sanitizes_placeholder_names(tmp_path):
    model = model_zoo.mlp(sizes=(8, 4))
    model.graph.input[0].name = "gpu_0/data"
    for node in model.graph.node:
        node.input[:] = ["gpu_0/data" if i == "input" else i for i in node.input]
    info = write_bundle(model, tmp_path, "mlp")
    text = info.header.read_text()
    assert "#define MLP_gpu_0_data  0" in text
    assert "'gpu_0/data'" in text


def _glow_compile(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "glow_mlir.tools.glow_compile", *args],
                          capture_output=True, text=True, env=env)


def test_cli_writes_only_the_bundle(tmp_path):
    proc = _glow_compile(str(SMALL_CNN), "--emit-bundle", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    names = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert names == ["small_cnn.h", "small_cnn.o", "small_cnn.weights.bin",
                     "small_cnn.weights.txt"]


def test_cli_bundle_with_emit(tmp_path):
    proc = _glow_compile(str(SMALL_CNN), "--emit", "instr", "--emit-bundle", str(tmp_path),
                         "--network-name", "cnn")
    assert proc.returncode == 0, proc.stderr
    assert "glow_ir.func" in proc.stdout
    assert (tmp_path / "cnn.o").stat().st_size > 0


def test_cli_bundle_with_emit_llvm_ir_prints_its_code(tmp_path):
    """--emit llvm-ir with a bundle prints the bundle's code (its entry point renamed);
    --emit llvm, the LLVM-dialect route a bundle no longer takes, is refused before
    anything is compiled (it printed the bundle's half-lowered loop IR)."""
    proc = _glow_compile(str(SMALL_CNN), "--emit", "llvm-ir", "--emit-bundle",
                         str(tmp_path / "b"), "--network-name", "cnn")
    assert proc.returncode == 0, proc.stderr
    assert "define noundef i32 @cnn(" in proc.stdout and proc.stderr == ""
    assert (tmp_path / "b" / "cnn.o").stat().st_size > 0
    proc = _glow_compile(str(SMALL_CNN), "--emit", "llvm", "--emit-bundle",
                         str(tmp_path / "c"), "--network-name", "cnn")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("glow-compile: error: --emit llvm prints the LLVM-dialect route, "
                           "which a bundle does not take (it is compiled as the JIT "
                           "compiles, from the loop IR): --emit llvm-ir shows the bundle's "
                           "code\n")
    assert not (tmp_path / "c").exists()


def test_cli_bad_network_name(tmp_path):
    proc = _glow_compile(str(SMALL_CNN), "--emit-bundle", str(tmp_path),
                         "--network-name", "my-net")
    assert proc.returncode == 1
    assert "glow-compile: error: network name 'my-net' is not a C identifier" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_unwritable_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = _glow_compile(str(SMALL_CNN), "--emit-bundle", str(blocker / "sub"))
    assert proc.returncode == 1
    assert "glow-compile: error: cannot create the bundle directory" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert blocker.read_text() == "x"


def test_cli_default_still_prints_graph():
    proc = _glow_compile(str(SMALL_CNN))
    assert proc.returncode == 0, proc.stderr
    assert "func.func" in proc.stdout


def test_write_bundle_takes_a_compiled_model(tmp_path):
    """README's path: write_bundle(glow_mlir.compile(..., backend="cpu"), ...) writes the
    code the model's JIT runs, renamed, and the model still runs afterwards."""
    import glow_mlir

    model = glow_mlir.compile(str(SMALL_CNN), backend="cpu")
    info = write_bundle(model, tmp_path / "bundle", "cnn")
    _check_files(info)
    x = np.random.default_rng(2).standard_normal(info.inputs[0].shape).astype(np.float32)
    (jit_out,) = model(x)
    if CC is not None:
        got = _run_bundle(info, _build_program(info, tmp_path), x, tmp_path)
        np.testing.assert_allclose(got, jit_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jit_out, _onnxruntime(SMALL_CNN, x), rtol=1e-4, atol=1e-5)


def test_write_bundle_refuses_a_model_of_another_backend(tmp_path):
    import glow_mlir
    from glow_mlir.runtime.bundle import BundleError

    model = glow_mlir.compile(str(SMALL_CNN), backend="interpreter")
    with pytest.raises(BundleError, match="compiled for backend 'interpreter': compile it "
                                          "with backend=\"cpu\""):
        write_bundle(model, tmp_path, "cnn")
    with pytest.raises(BundleError, match="not list"):
        write_bundle([1, 2], tmp_path, "cnn")
    assert not (tmp_path / "cnn.o").exists()


BAD_TARGETS = r"""
import sys
import glow_mlir
from glow_mlir.runtime.bundle import write_bundle
from glow_mlir.ir.errors import UserError
model, out = sys.argv[1], sys.argv[2]
for kwargs in ({"cpu": "not-a-cpu"}, {"cpu": "znver"}, {"cpu": "x86-64", "features": "+foo"},
               {"features": "avx2"}):
    try:
        write_bundle(model, out, "cnn", **kwargs)
    except UserError as err:
        print(type(err).__name__, err)
try:
    glow_mlir.compile(model, backend="cpu", cpu="not-a-cpu")
except UserError as err:
    print(type(err).__name__, err)
print("still alive")
"""


def test_bad_cpu_names_are_errors_not_aborts(tmp_path):
    """LLVM warns about an unknown CPU name and then aborts the process when it generates
    code (a feature without +/- aborts at once): each is refused first, as a UserError
    saying how to list the names, and the process goes on (run apart, so an abort would
    show as a signal)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", BAD_TARGETS, str(SMALL_CNN), str(tmp_path)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "still alive"
    assert lines[0].startswith("CpuTargetError unknown CPU 'not-a-cpu' for target ")
    assert "print(*cpu_names())" in lines[0]
    assert "did you mean 'znver" in lines[1]
    assert lines[2].startswith("CpuTargetError unknown CPU feature 'foo'")
    assert "print(*cpu_features())" in lines[2]
    assert "CPU feature 'avx2' must be '+NAME' (enable) or '-NAME'" in lines[3]
    assert "unknown option 'cpu' for backend 'cpu'" in lines[4]
    assert "LLVM ERROR" not in proc.stderr and "not a recognized" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_cpu_names_are_llvms():
    from glow_mlir.targets.cpu.jit import check_cpu, cpu_features, cpu_names

    assert {"x86-64", "x86-64-v3", "skylake"} <= set(cpu_names())
    assert {"avx2", "fma", "sse4.2"} <= set(cpu_features())
    check_cpu("x86-64-v3", "+avx2,-fma")  # no error


def test_cpu_check_without_llvms_lists(monkeypatch):
    """LLVM prints its lists once per process: without them, its warning on a target
    machine (harmless until code is generated) still tells a bad name from a good one."""
    from glow_mlir.targets.cpu import jit

    monkeypatch.setattr(jit, "_llvm_help", lambda: {"cpus": [], "features": []})
    with pytest.raises(jit.CpuTargetError, match="unknown CPU 'not-a-cpu'"):
        jit.check_cpu("not-a-cpu")
    with pytest.raises(jit.CpuTargetError, match="unknown CPU feature 'foo'"):
        jit.check_cpu("x86-64", "+avx2,+foo")
    jit.check_cpu("x86-64-v3", "+avx2")


def test_cli_cpu_flags(tmp_path):
    proc = _glow_compile(str(SMALL_CNN), "--emit-bundle", str(tmp_path / "bad"),
                         "--cpu", "not-a-cpu")
    assert proc.returncode == 1
    assert "glow-compile: error: unknown CPU 'not-a-cpu'" in proc.stderr
    assert "Traceback" not in proc.stderr and "LLVM ERROR" not in proc.stderr
    proc = _glow_compile(str(SMALL_CNN), "--cpu", "x86-64")
    assert proc.returncode == 1 and "give --emit-bundle DIR too" in proc.stderr
    proc = _glow_compile(str(SMALL_CNN), "--emit-bundle", str(tmp_path / "ok"),
                         "--cpu", "x86-64-v2", "--cpu-features", "+avx2,+fma")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ok" / "small_cnn.o").stat().st_size > 0


def _readme_bundle_blocks() -> list[tuple[str, str]]:
    """(language, code) of each fenced block in README.md's "AOT bundles" section."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## AOT bundles\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```(\w+)\n(.*?)^```$", section, re.M | re.S)


def test_readme_bundle_section_runs_verbatim(tmp_path):
    """README's bundle section, as a user of a fresh clone follows it: its commands run
    as written (in a directory holding the clone's examples/, with `glow-compile` on
    PATH as `pip install` puts it), its main.c compiles with them, and the program
    prints onnxruntime's probabilities; its Python snippet runs too."""
    if shutil.which("cc") is None:
        pytest.skip("no cc")
    blocks = _readme_bundle_blocks()
    assert [lang for lang, _ in blocks] == ["sh", "c", "sh", "python"]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "main.c").write_text(blocks[1][1])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "glow-compile"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m glow_mlir.tools.glow_compile "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(ROOT / "src"))
    printed = []
    for lang, code in blocks:
        if lang == "sh":
            for line in code.splitlines():
                if line.strip() and not line.startswith("#"):
                    proc = subprocess.run(line, shell=True, cwd=tmp_path, env=env,
                                          capture_output=True, text=True)
                    assert proc.returncode == 0, (line, proc.stderr)
                    printed.append(proc.stdout)
        elif lang == "python":
            proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == [
        "cnn.h", "cnn.o", "cnn.weights.bin", "cnn.weights.txt"]
    rows = [line.split() for line in printed[-1].splitlines()]
    assert [int(i) for i, _ in rows] == list(range(10))
    want = _onnxruntime(SMALL_CNN, np.ones((1, 3, 32, 32), np.float32)).reshape(-1)
    np.testing.assert_allclose([float(p) for _, p in rows], want, rtol=1e-4, atol=2e-6)


def test_threaded_bundle_runs_from_c_with_its_pool_or_the_programs(tmp_path, monkeypatch):
    """A bundle compiled for 2 or 3 threads holds the default pool (weak
    glow_parallel_for) and gives the one-thread bundle's bits; a program's own
    glow_parallel_for replaces it (the pool hook the header documents). Direct
    convolutions: as Winograd products, the small CNN's layers all fall under the
    parallel cut-off, and the bundle would have no parallel loop to hand the pool."""
    if CC is None:
        pytest.skip("no C compiler")
    from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd

    monkeypatch.setattr(kernels_winograd, "WINOGRAD", "never")
    x = np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype(np.float32)
    outs = {}
    for threads in (1, 2, 3):
        info = write_bundle(SMALL_CNN, tmp_path / f"b{threads}", "cnn", num_threads=threads)
        header = info.header.read_text()
        assert ("CNN_NUM_THREADS" in header) == (threads > 1)
        assert ("glow_parallel_for" in header) == (threads > 1)
        exe = _build_program(info, tmp_path, ("-pthread",))
        outs[threads] = _run_bundle(info, exe, x, tmp_path)
    assert outs[2].tobytes() == outs[1].tobytes() == outs[3].tobytes()
    hook = tmp_path / "hook.c"
    hook.write_text(
        "#include <stdint.h>\n#include <stdio.h>\n"
        "static int calls;\n"
        "void glow_parallel_for(void (*chunk)(void *, int64_t, int64_t, int64_t), void *ctx,\n"
        "                       int64_t lo, int64_t hi, int64_t threads) {\n"
        "  calls++;\n  for (int64_t i = hi - 1; i >= lo; i--) chunk(ctx, i, i + 1, 0);\n}\n"
        "__attribute__((destructor)) static void report(void) {\n"
        "  fprintf(stderr, \"hook calls %d\\n\", calls);\n}\n")
    info = write_bundle(SMALL_CNN, tmp_path / "b2", "cnn", num_threads=2)
    exe = _build_program(info, tmp_path, (str(hook),))
    (out,) = info.outputs
    x_path, y_path = tmp_path / "input.bin", tmp_path / "output.bin"
    x_path.write_bytes(x.tobytes())
    proc = subprocess.run([str(exe), str(info.weights_bin), str(x_path), str(y_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stderr.split("hook calls")[1]) > 0
    assert np.frombuffer(y_path.read_bytes(), np.float32).tobytes() == outs[1].tobytes()


def test_bundles_for_any_thread_count_run_the_jits_kernels(tmp_path, record_calls):
    """A one-thread bundle is lowered as the JIT and the threaded bundles are (the loop
    IR's route, vector kernels on): a global average pool above the parallel cut-off
    takes the vector kernel in every bundle, whose bits are the JIT's at 1, 2 and 3
    threads. One-thread bundles went through the LLVM-dialect route, without the vector
    kernels: the scalar loop nest, other bits (the small CNN's pool, 2 threads vs 1)."""
    if CC is None:
        pytest.skip("no C compiler")
    from onnx import TensorProto, helper

    from glow_mlir.conversion.glow_ir_to_loops import kernels_pool
    from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_MIN_WORK

    shape = (1, 160, 57, 57)  # 3249 = whole vectors of 16 or 8 and one more
    assert np.prod(shape) * 2 >= PARALLEL_MIN_WORK  # the pool splits over threads
    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["x"], ["y"])], "gap",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (*shape[:2], 1, 1))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32) + 3.0
    calls = record_calls(kernels_pool, "_global_avg_pool", lambda instr, em: instr)
    want = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False).run(
        {"x": x})[0]
    for threads in (1, 2, 3):
        before = len(calls)
        info = write_bundle(model, tmp_path / f"b{threads}", "gap", num_threads=threads)
        assert len(calls) == before + 1, f"{threads}-thread bundle: not the vector pool"
        out_dir = tmp_path / f"run{threads}"
        out_dir.mkdir()
        exe = _build_program(info, out_dir, ("-pthread",))
        got = _run_bundle(info, exe, x, out_dir)
        assert got.tobytes() == want.tobytes(), f"{threads}-thread bundle differs"


def test_a_bundle_takes_the_jits_weight_forms(tmp_path):
    """A bundle of an ONNX model rewrites the constant weights into the JIT's forms
    (`rewrite_weight_forms`: Winograd's U, gemm panels) before its loops, so its
    convolutions take the JIT's kernels and give its bits at 1 and 2 threads; without
    them a 3x3 convolution ran another kernel (the bundle was 1e-5 off the JIT)."""
    if CC is None:
        pytest.skip("no C compiler")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(6)
    w = numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.1)
                                .astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 16, 32, 32))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 16, 32, 32))], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, 16, 32, 32)).astype(np.float32)
    jit = glow_mlir.compile(model, backend="cpu", num_threads=1, cache=False)
    assert jit.memory.constant_bytes > 16 * 16 * 9 * 4  # a weight form (U) was taken
    want = jit.run({"x": x})[0]
    for threads in (1, 2):
        info = write_bundle(model, tmp_path / f"b{threads}", "conv", num_threads=threads)
        out_dir = tmp_path / f"run{threads}"
        out_dir.mkdir()
        got = _run_bundle(info, _build_program(info, out_dir, ("-pthread",)), x, out_dir)
        assert got.tobytes() == want.tobytes(), f"{threads}-thread bundle differs"


def test_bundle_thread_count_is_checked(tmp_path):
    from glow_mlir.backends.cpu import ThreadCountError
    from glow_mlir.runtime.bundle import BundleError

    with pytest.raises(ThreadCountError):
        write_bundle(SMALL_CNN, tmp_path, "cnn", num_threads=0)
    # a compiled model's code is what the bundle holds: its count, and no other (another
    # count was once dropped without a word, writing a 2-thread bundle for 3)
    model = glow_mlir.compile(str(SMALL_CNN), backend="cpu", num_threads=2)
    assert model.num_threads == 2
    with pytest.raises(BundleError, match="compiled for 2 threads .* drop num_threads=3"):
        write_bundle(model, tmp_path / "b3", "cnn", num_threads=3)
    assert not (tmp_path / "b3" / "cnn.o").exists()
    assert write_bundle(model, tmp_path / "b2", "cnn").num_threads == 2
    assert write_bundle(model, tmp_path / "b2", "cnn", num_threads=2).num_threads == 2


def test_threaded_bundle_takes_the_programs_linger(tmp_path, monkeypatch):
    """A threaded bundle's entry point calls glow_pool_begin/glow_pool_end (weak, in the
    bundle); a program's own `int64_t glow_pool_linger_ns` (0: workers never spin through
    runs nor linger) replaces the bundle's default and the bits stay the one-thread ones."""
    if CC is None:
        pytest.skip("no C compiler")
    from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd

    monkeypatch.setattr(kernels_winograd, "WINOGRAD", "never")  # parallel loops (above)
    x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
    one = write_bundle(SMALL_CNN, tmp_path / "b1", "cnn", num_threads=1)
    want = _run_bundle(one, _build_program(one, tmp_path, ("-pthread",)), x, tmp_path)
    info = write_bundle(SMALL_CNN, tmp_path / "b2", "cnn", num_threads=2)
    symbols = subprocess.run(["nm", str(info.object_file)], capture_output=True, text=True)
    if symbols.returncode == 0:
        assert " W glow_pool_begin" in symbols.stdout and " V glow_pool_linger_ns" in \
            symbols.stdout, symbols.stdout
    linger = tmp_path / "linger.c"
    # the header declares it: a definition after the header is what its comment says
    assert "extern int64_t glow_pool_linger_ns;" in info.header.read_text()
    linger.write_text('#include "cnn.h"\nint64_t glow_pool_linger_ns = 0;\n')
    for flags in (("-pthread",), ("-pthread", str(linger))):
        got = _run_bundle(info, _build_program(info, tmp_path, flags), x, tmp_path)
        assert got.tobytes() == want.tobytes()
