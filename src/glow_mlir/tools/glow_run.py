"""glow-run: run an ONNX model or a model in IR on given or random inputs, optionally
against onnxruntime.

    glow-run model.onnx [--backend B] [--inputs x.npz] [--input-shape input=1x3x224x224]
             [--compare-onnxruntime] [--runs N]
    glow-run model.onnx --specialize first-call --inputs x.npz [--max-specializations N]
    glow-run prog.mlir [--backend B] [--inputs x.npz]
    glow-run model.glow [--inputs x.npz]

A `.mlir` file holds one function: a `glow` graph (compiled as an imported ONNX model is)
or a `glow_ir` program, such as `glow-compile --emit instr` prints (a planned one runs as
it is); its weights are the file's `dense_resource` blobs. A `.glow` file is a saved model
(`glow-compile --save`, `CompiledModel.save`): it runs without compiling. Compiled code
is cached (`--no-cache`: neither read nor write the cache). `--specialize first-call`
compiles an ONNX model at its first run, specialized on the shapes of the given inputs (as
`glow_mlir.compile(model, specialize="first-call")` does: runtime/specialized.py), and prints
the specializing cache's hits and misses after the runs.

Prints each output's name, shape and a summary of its values (min/max/mean), the time per
run, and with --compare-onnxruntime the largest absolute and relative error against
onnxruntime; exits 1 when they differ beyond --rtol/--atol (an element matches when
|got - expected| <= atol + rtol * |expected|). The relative error is taken only over the
elements where rtol * |expected| >= atol (next to zero atol decides, and a relative error
there says nothing); the line says over how many of all, so an output of tiny values
that "matches" on atol alone is seen as such. Random inputs use a fixed seed
(--seed), so two runs see the same numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping, Sequence

import numpy as np

from glow_mlir.backends import DEFAULT_BACKEND
from glow_mlir.ir.errors import UserError, check_readable
from glow_mlir.tools.errors import (
    ArgumentParser,
    StoreOnce,
    at_least,
    non_negative_float,
    usage_error,
    user_errors_exit,
)
from glow_mlir.tools.glow_compile import (
    add_model_arguments,
    backend_options,
    input_shapes,
    model_path,
    resolve_model,
)
from glow_mlir.tools.unbound_dims import unbound_dims_in_flags


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="glow-run", description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(p, "ONNX model, a model in IR (.mlir: one glow graph or "
                           "glow_ir program), or a saved model (.glow)", caffe2=True, emits=False)
    p.add_argument("--inputs", action=StoreOnce,
                   help=".npz file of inputs by name (random when absent; give it once: "
                        "one file holds all the inputs)")
    p.add_argument(
        "--seed", type=at_least(0), default=0, help="seed of the random inputs (default 0)"
    )
    p.add_argument("--specialize", choices=("first-call",), default=None, action=StoreOnce,
                   help="compile at the first run, specialized on the inputs' shapes (and "
                        "the values of inputs that set shapes); needs --inputs")
    p.add_argument("--max-specializations", type=at_least(1), default=None, action=StoreOnce,
                   help="compiled functions --specialize keeps (default 8)")
    p.add_argument("--runs", type=at_least(1), default=1, help="timed runs (default 1)")
    p.add_argument("--trace", metavar="FILE.json", default=None, action=StoreOnce,
                   help="time every kernel call of every run and write them as Chrome trace "
                        "events (open in ui.perfetto.dev or chrome://tracing; cpu backend)")
    p.add_argument("--compare-onnxruntime", action="store_true",
                   help="run onnxruntime on the same inputs; exit 1 if the outputs differ")
    p.add_argument(
        "--rtol", type=non_negative_float, default=1e-4,
        help="relative tolerance (default 1e-4): an element matches when |got - expected| "
             "<= atol + rtol*|expected|; the max rel error printed is over the elements "
             "where rtol*|expected| >= atol only, and the line says how many those are"
    )
    p.add_argument(
        "--atol", type=non_negative_float, default=1e-5,
        help="absolute tolerance (default 1e-5): it alone decides for elements where "
             "rtol*|expected| < atol"
    )
    return p


def random_inputs(shapes: Mapping[str, tuple[int, ...]], dtypes: Mapping[str, np.dtype],
                  seed: int) -> dict[str, np.ndarray]:
    """Standard normal floats; integers in [0, 10) (small enough to index most tables);
    random booleans."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes.items():
        dtype = np.dtype(dtypes[name])
        # bfloat16's kind is 'V' (ml_dtypes); its name says what it is, and asking
        # ir.element_types would import xDSL on a model-cache hit
        if dtype.kind == "f" or "float" in dtype.name:
            out[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            out[name] = rng.integers(0, 10, size=shape).astype(dtype)
        else:
            out[name] = rng.random(shape) < 0.5
    return out


def load_inputs(path: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz file by name; anything else is a UserError that says why."""
    import zipfile

    check_readable(path, "inputs")
    try:
        data = np.load(path, allow_pickle=False)
    except EOFError:
        raise UserError(f"cannot read inputs '{path}': the file is empty") from None
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        # numpy takes any file that is neither zip nor .npy for a pickle and suggests
        # allow_pickle=True, an unsafe hint for what is simply not an .npz: say that instead.
        reason = "it is neither a zip archive nor an .npy array" if "pickle" in str(err) else err
        raise UserError(f"cannot read inputs '{path}': not an .npz file ({reason})") from None
    if isinstance(data, np.ndarray):
        raise UserError(f"'{path}' is a single .npy array; give an .npz of inputs by name")
    with data:
        try:
            return {k: data[k] for k in data.files}
        except ValueError:  # an object array: it would need pickle
            raise UserError(f"cannot read inputs '{path}': it holds an object array "
                            f"(inputs are numeric arrays)") from None
        except (OSError, EOFError, zipfile.BadZipFile) as err:
            raise UserError(f"cannot read inputs '{path}': a damaged .npz file "
                            f"({err})") from None


def summary(x: np.ndarray) -> str:
    if x.size == 0:
        return "empty"
    v = x.astype(np.float64)
    return f"min {v.min():.6g}  max {v.max():.6g}  mean {v.mean():.6g}"


def compare(
    got: np.ndarray, want: np.ndarray, rtol: float, atol: float
) -> tuple[float, float, bool]:
    """(max abs error, max rel error, within tolerance) of one output.

    NaN against NaN and an infinity against the same infinity are equal: both runtimes
    produce them from the same inputs (a NaN in the input flows through), and a NaN is
    never `<=` a tolerance. Any other disagreement at a non-finite value fails
    (`nonfinite_mismatch` says where); the errors are measured where both are finite.
    The relative error is measured where the relative tolerance governs (`rtol * |want|
    >= atol`): next to zero, where `atol` decides, a tiny difference is a huge relative
    error that said nothing about a match (0.0005 printed next to rtol 1e-4 and "match")."""
    if got.shape != want.shape:
        return float("inf"), float("inf"), False
    if got.size == 0:
        return 0.0, 0.0, True
    g, w = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(g) & np.isfinite(w)
    scale = np.where(finite, np.abs(w), 0.0)
    diff = np.abs(np.subtract(g, w, out=np.zeros_like(g), where=finite))
    # divided only where it is read: a difference over the tiny stand-in for a zero
    # expected value overflowed (a warning for every mismatched index output)
    governed = rtol * scale >= atol
    rel = np.divide(diff, scale, out=np.zeros_like(diff), where=governed & (scale > 0))
    rel[governed & (scale == 0) & (diff > 0)] = np.inf
    ok = not _nonfinite_disagree(g, w).any() and bool(np.all(diff <= atol + rtol * scale))
    return float(diff.max()), float(rel.max()), ok


def relative_count(want: np.ndarray, rtol: float, atol: float) -> int:
    """How many elements `compare`'s relative error is measured over: the finite ones
    where `rtol * |want| >= atol`."""
    w = want.astype(np.float64)
    return int(np.count_nonzero(np.isfinite(w) & (rtol * np.abs(w) >= atol)))


def _nonfinite_disagree(g: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Where at least one side is NaN or infinite and the two are not the same value."""
    return ~((np.isfinite(g) & np.isfinite(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))


def nonfinite_mismatch(got: np.ndarray, want: np.ndarray) -> str:
    """Where the NaNs or infinities of two same-shaped outputs differ, in words; '' when
    they agree."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = _nonfinite_disagree(g, w)
    if not bad.any():
        return ""
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    what = ("NaN at different positions" if (np.isnan(g) != np.isnan(w)).any()
            else "infinities differ")
    return (f"{what}: {int(bad.sum())} position(s), the first at index {list(first)} "
            f"(glow-mlir {g[first]:g}, onnxruntime {w[first]:g})")


def run_onnxruntime(model_path: str, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    try:
        import onnxruntime as ort
    except ImportError:
        raise UserError(
            "--compare-onnxruntime needs onnxruntime (pip install onnxruntime)"
        ) from None
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 4  # its failure is reported below, in one line
        session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
        return session.run(None, dict(inputs))
    except Exception as err:  # noqa: BLE001 - onnxruntime raises its own types
        raise UserError(f"onnxruntime could not run the model: "
                        f"{' '.join(str(err).split())}") from None


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.given_backend = args.backend
    args.backend = args.backend or DEFAULT_BACKEND
    with user_errors_exit("glow-run", args.debug):
        resolve_model(args, "glow-run")
        with unbound_dims_in_flags(args.inputs and [args.inputs],
                                   "run with --specialize first-call"):
            code = run(args)
        sys.exit(code)


def _check_trace_place(path: str | None) -> None:
    """The trace file can be written: said before the compile and the runs, not after."""
    if not path:
        return
    if os.path.isdir(path):
        raise UserError(f"cannot write the trace to '{path}': it is a folder (give a file "
                        f"name, e.g. {os.path.join(path, 'trace.json')})")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UserError(f"cannot write the trace to '{path}': no folder '{folder}'")
    if not os.access(folder, os.W_OK):
        raise UserError(f"cannot write the trace to '{path}': the folder '{folder}' is "
                        f"not writable")


def _check_specialize(args: argparse.Namespace) -> None:
    """--specialize takes its shapes from --inputs: no random inputs, no --input-shape."""
    if args.max_specializations is not None and not args.specialize:
        usage_error("glow-run", "--max-specializations bounds the compiles of --specialize "
                                "first-call: give --specialize first-call too")
    if not args.specialize:
        return
    if args.input_shape:
        usage_error("glow-run", "--specialize first-call takes the shapes from --inputs; "
                                "drop --input-shape")
    if not args.inputs:
        usage_error("glow-run", "--specialize first-call compiles for the shapes of the "
                                "inputs it runs on: give them with --inputs x.npz")


def _compiles(model) -> int:
    """How many functions a specializing model has compiled so far (0 for any other)."""
    from glow_mlir.runtime.specialized import SpecializingModel

    return model.cache_info().misses if isinstance(model, SpecializingModel) else 0


def _checked_inputs(model, inputs: dict[str, np.ndarray], path: str | None) -> list:
    """The model's checked input arrays; a bad input read from a file names that file,
    so the user knows which of their .npz files to mend."""
    from glow_mlir.runtime.compiled_model import InputError

    try:
        return model.check_inputs(inputs)
    except InputError as err:
        if path is None:
            raise
        raise UserError(f"inputs '{path}': {err}") from None


def run(args: argparse.Namespace) -> int:
    import glow_mlir
    from glow_mlir.runtime.ir_models import is_mlir_path
    from glow_mlir.runtime.saved_model import is_saved_model
    from glow_mlir.runtime.specialized import SpecializingModel

    model = None
    if is_saved_model(args.model):
        given = [flag for flag, on in (("--input-shape", args.input_shape),
                                       ("--scratchpad-kib", args.scratchpad_kib),
                                       ("--threads", args.threads is not None),
                                       ("--trace", args.trace),
                                       ("--time-passes", args.time_passes),
                                       ("--compare-onnxruntime", args.compare_onnxruntime),
                                       ("--specialize", args.specialize))
                 if on]
        if given:
            usage_error("glow-run", f"'{args.model}' is a saved model, compiled already (its "
                                    f"shapes fixed, without its ONNX model): drop "
                                    f"{', '.join(given)}")
        model = glow_mlir.load(args.model)
        # the saved model has its backend: naming the same one is harmless
        if args.given_backend not in (None, model.backend):
            raise UserError(f"'{args.model}' is a saved model compiled for backend "
                            f"'{model.backend}'; it cannot run on '{args.given_backend}': "
                            f"drop --backend, or compile the ONNX model for "
                            f"'{args.given_backend}'")
        args.backend = model.backend
    elif isinstance(args.model, tuple) and args.compare_onnxruntime:
        usage_error("glow-run", "--compare-onnxruntime runs an ONNX model on onnxruntime; "
                                "a Caffe2 model is not one")
    elif args.specialize and (isinstance(args.model, tuple) or is_mlir_path(args.model)):
        what = "a Caffe2 model" if isinstance(args.model, tuple) else f"'{args.model}' (IR)"
        usage_error("glow-run", f"--specialize first-call compiles ONNX models; {what} has "
                                f"its shapes given once: drop --specialize")
    elif is_mlir_path(args.model):
        if args.compare_onnxruntime:
            usage_error("glow-run", f"--compare-onnxruntime runs an ONNX model on onnxruntime; "
                                    f"'{args.model}' is a model in IR")
        if args.input_shape:
            usage_error("glow-run", f"--input-shape binds an ONNX model's symbolic dimensions; "
                                    f"the shapes of '{args.model}' are in its types")
    _check_specialize(args)
    if model is None:
        _check_trace_place(args.trace)
        specialize = ({"specialize": args.specialize,
                       "max_specializations": args.max_specializations}
                      if args.specialize else {})
        model = glow_mlir.compile(args.model, backend=args.backend,
                                  input_shapes=input_shapes(args), verbose=args.time_passes,
                                  progress=False if args.quiet else None,
                                  cache=not args.no_cache, **specialize,
                                  **backend_options(args))
    if args.inputs:
        inputs, origin = load_inputs(args.inputs), f"from {args.inputs}"
    else:
        inputs, origin = random_inputs(model.input_shapes, model.input_dtypes, args.seed), \
            f"random, seed {args.seed}"
    arrays = _checked_inputs(model, inputs, args.inputs)  # fail before any run
    threads = getattr(model, "num_threads", None)
    on = f", {threads} thread{'s' if threads > 1 else ''}" if threads else ""
    print(f"model: {model_path(args.model)} (backend {args.backend}{on})")
    for name, x in zip(model.input_names, arrays):
        print(f"input  {name}: {'x'.join(map(str, x.shape)) or 'scalar'} {x.dtype} ({origin})")
    # a specializing model's runs that compiled are timed apart
    times: list[float] = []
    compiling: list[float] = []
    for _ in range(args.runs):
        compiled = _compiles(model)
        start = time.perf_counter()
        outputs = model.run(inputs)
        took = time.perf_counter() - start
        (compiling if _compiles(model) > compiled else times).append(took)
    for name, y in zip(model.output_names, outputs):
        print(f"output {name}: {'x'.join(map(str, y.shape)) or 'scalar'} {y.dtype}  {summary(y)}")
    if times:
        print(f"time per run: {1e3 * float(np.mean(times)):.3f} ms (wall clock, mean of "
              f"{len(times)}, min {1e3 * min(times):.3f} ms)")
    if compiling:
        print(f"time of the run that compiled: {1e3 * compiling[0]:.3f} ms (compile included"
              + ("; --runs 2 or more times runs without it)" if not times else ")"))
    if isinstance(model, SpecializingModel):
        info = model.cache_info()
        print(f"specializations: {info.misses} compiled, {info.hits} hit(s), {info.entries} "
              f"kept (at most {info.max_entries})")
    if args.trace:
        model.write_trace(args.trace)
        # a specializing model's trace is its last run's function's (`model.last`)
        whose = " (the last run's function)" if isinstance(model, SpecializingModel) else ""
        calls = len(model.trace["traceEvents"])
        print(f"trace: {calls} kernel call{'' if calls == 1 else 's'} in {args.trace}{whose}")
    if not args.compare_onnxruntime:
        return 0
    expected = run_onnxruntime(args.model, dict(zip(model.input_names, arrays)))
    worst_abs, worst_rel, all_ok = 0.0, 0.0, True
    measured = total = 0
    for name, got, want in zip(model.output_names, outputs, expected):
        max_abs, max_rel, ok = compare(got, want, args.rtol, args.atol)
        measured += relative_count(want, args.rtol, args.atol)
        total += want.size
        worst_abs, worst_rel, all_ok = (
            max(worst_abs, max_abs),
            max(worst_rel, max_rel),
            all_ok and ok,
        )
        if not ok:
            detail = (f"shape {got.shape}, onnxruntime {want.shape}" if got.shape != want.shape
                      else nonfinite_mismatch(got, want)
                      or f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g}")
            print(f"  output {name} differs from onnxruntime: {detail}")
    verdict = "match" if all_ok else "MISMATCH"
    rel = f"{worst_rel:.3g}" if measured else "-"
    where = (f"rel error over {measured:,} of {total:,} elements, those where "
             f"rtol*|expected| >= atol" + ("" if measured else "; atol alone decided"))
    print(f"onnxruntime: max abs error {worst_abs:.3g}, max rel error {rel} ({where}; "
          f"rtol {args.rtol:g}, atol {args.atol:g}): {verdict}")
    if not all_ok:
        print(f"glow-run: error: outputs differ from onnxruntime beyond rtol {args.rtol:g}, "
              f"atol {args.atol:g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    main()
