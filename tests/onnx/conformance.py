"""ONNX node conformance: every node test case of every standard op, run through
`glow_mlir.onnx_backend` and compared with the case's expected outputs the way ONNX's
backend test runner compares them (`np.testing.assert_allclose` with the case's own rtol
and atol, 1e-3 and 1e-7 for every node case onnx 1.23 defines).

A failing case is put in one category, so the table of failures says what to fix:

    unsupported      the importer's aggregated UnsupportedOnnxError (op type, attribute
                     value, element type or non-tensor value it does not translate)
    needs-constant   the same error, only for values the importer needs at compile time
                     but the case gives at run time (a graph input used as a shape, a
                     branch condition, a data-dependent output shape)
    dynamic-shape    a dimension the importer cannot make static
    import-error     another error the importer reports to the user
    no-kernel        the reference evaluator has no kernel for an op the importer emits
    evaluator-error  a kernel rejected its operands or produced the wrong shape
    input-error      the compiled model rejects the case's inputs (name, shape or dtype)
    wrong-count/-shape/-dtype/-numbers
                     the outputs differ from the expected ones
    crash            any other exception: a bug (the message names the innermost frame)

Run it as `python -m tests.onnx.conformance` or `python tests/onnx/conformance.py`; pytest
runs the same cases one test each (`test_node_conformance.py`). `--glow-ops` runs only the
ops Glow's loader and issue 3 claim; `--onnxruntime` also runs onnxruntime on the same
cases and prints its count per op and in total next to ours. After adding ops, rewrite
the expected-failures list over the whole suite with

    python tests/onnx/conformance.py --write-expected-failures
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the sibling module, whether run as a script, -m, or by pytest
    sys.path.insert(0, str(HERE))

import node_cases  # noqa: E402
from constant_inputs import bind_shape_inputs  # noqa: E402
from glow_mlir.tools.errors import ArgumentParser  # noqa: E402
from node_cases import ALL_OPS, LISTED_OPS, NodeCase  # noqa: E402

EXPECTED_FAILURES = HERE / "expected_failures.txt"

RUNTIME_VALUE = "is computed at run time"
"""How the importer's message says that a value it needs at compile time is not constant."""

RECORDED: list[Result] = []
"""The results of a pytest run, for the table its terminal summary prints (conftest.py)."""


@dataclass(frozen=True)
class Result:
    name: str
    op_type: str
    category: str
    """"pass", or the failure category (see the module docstring)."""
    detail: str = ""
    bound: tuple[str, ...] = ()
    """The shape-like inputs bound as constants (`constant_inputs.py`)."""

    @property
    def passed(self) -> bool:
        return self.category == "pass"


# ---------------------------------------------------------------- expected failures
def read_expected_failures(path: Path = EXPECTED_FAILURES) -> dict[str, str]:
    """Case name -> reason, from lines `test_name  # reason`; blank and `#` lines skipped.
    A line without a reason is an error: the list must say why each case fails."""
    listed: dict[str, str] = {}
    if not path.exists():
        return listed
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        name, sep, reason = text.partition("#")
        name, reason = name.strip(), reason.strip()
        if not sep or not reason or " " in name:
            raise ValueError(f"{path}:{number}: expected 'test_name  # reason', got {line!r}")
        if name in listed:
            raise ValueError(f"{path}:{number}: {name} is listed twice")
        listed[name] = reason
    return listed


def format_expected_failures(results: list[Result]) -> str:
    """The expected-failures file for `results`' failures, grouped by op, each with its
    category and the first line of its message as the reason."""
    lines = ["# ONNX node test cases glow-mlir is known to fail, one per line with its reason.",
             "# Regenerate with `python -m tests.onnx.conformance --write-expected-failures`.",
             "# A listed case that passes is reported as XPASS: remove its line."]
    by_op: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if not r.passed:
            by_op[r.op_type].append(r)
    for op in sorted(by_op):
        lines.append(f"\n# {op}")
        for r in sorted(by_op[op], key=lambda r: r.name):
            lines.append(f"{r.name}  # {r.category}: {r.detail}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- running one case
def run_case(case: NodeCase, constant_inputs: bool = False, backend: str = "interpreter") -> Result:
    """Prepare the case's model with our ONNX backend on glow-mlir's `backend`, run it,
    compare, and classify. Every input is fed at run time as the suite gives it (the
    backend compiles at the first call what needs a shape-like input's value); with
    `constant_inputs` the shape-like ones are bound as initializers first."""
    from glow_mlir import onnx_backend

    bound: list[str] = []
    try:
        model, inputs, expected = case.load()
        if constant_inputs:
            model, inputs, bound = bind_shape_inputs(model, inputs)
        rep = onnx_backend.prepare(model, "CPU", backend=backend)
        outputs = list(rep.run(inputs))
        rtol, atol = case.rtol, case.atol
        category, detail = compare(expected, outputs, rtol, atol)
        if category == "wrong-numbers":
            detail += onnxruntime_opinion(model, inputs, outputs, expected, rtol, atol)
    except Exception as err:  # noqa: BLE001 - every failure is classified, none escapes
        category, detail = classify(err)
    return Result(case.name, case.op_type, category, detail, tuple(bound))


def classify(err: BaseException) -> tuple[str, str]:
    """The failure category of an exception, and a one-line message."""
    from glow_mlir.frontends.onnx import (
        OnnxImportError,
        UnboundDimensionError,
        UnsupportedOnnxError,
    )
    from glow_mlir.runtime.compiled_model import InputError
    from glow_mlir.targets.interpreter import EvaluationError

    message = " ".join(str(err).split())
    if isinstance(err, UnsupportedOnnxError):
        reasons = list(dict.fromkeys(f"{e.what}: {e.why}" for e in err.entries))
        runtime_only = all(RUNTIME_VALUE in e.why for e in err.entries)
        return "needs-constant" if runtime_only else "unsupported", "; ".join(reasons)
    if isinstance(err, UnboundDimensionError):
        return "dynamic-shape", message
    if isinstance(err, OnnxImportError):
        return "import-error", message
    if isinstance(err, EvaluationError):
        if "has no kernel" in message:
            return "no-kernel", message
        return "evaluator-error", message
    if isinstance(err, InputError):
        return "input-error", message
    frames = [f for f in traceback.extract_tb(err.__traceback__) if "glow_mlir" in f.filename]
    where = ""
    if frames:
        f = frames[-1]
        where = f" (at {f.filename.split('glow_mlir', 1)[1].lstrip(os.sep)}:{f.lineno} in {f.name})"
    return "crash", f"{type(err).__name__}: {message}{where}"


def compare(expected: list, outputs: list, rtol: float, atol: float,
            sequences: bool = False) -> tuple[str, str]:
    """("pass", "") or the first difference, as ONNX's `Runner.assert_similar_outputs`
    judges it: same count, shape and dtype, then `assert_allclose(rtol, atol)`. With
    `sequences` (onnxruntime's outputs), sequence and optional values are compared element
    by element; glow-mlir produces tensors only."""
    if len(outputs) != len(expected):
        return "wrong-count", f"{len(outputs)} outputs, expected {len(expected)}"
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        if sequences and (isinstance(ref, (list, tuple)) or ref is None):
            if ref is None or out is None:
                if (ref is None) != (out is None):
                    return "wrong-count", f"output {i}: optional value present in one only"
                continue
            if not isinstance(out, (list, tuple)):
                return "wrong-count", f"output {i} should be a sequence"
            category, detail = compare(list(ref), list(out), rtol, atol, sequences)
            if category != "pass":
                return category, f"output {i}: {detail}"
            continue
        if isinstance(ref, (list, tuple)) or ref is None:
            return "unsupported", f"output {i} should be a {type(ref).__name__}, and glow-mlir " \
                                  f"produces tensors only"
        out = np.asarray(out)
        if out.shape != ref.shape:
            return "wrong-shape", f"output {i} has shape {out.shape}, expected {ref.shape}"
        if ref.dtype == object:
            if not np.array_equal(out, ref):
                return "wrong-numbers", f"output {i}: strings differ"
            continue
        if out.dtype != ref.dtype:
            return "wrong-dtype", f"output {i} has dtype {out.dtype}, expected {ref.dtype}"
        try:
            np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
        except AssertionError:
            return "wrong-numbers", f"output {i}: {_difference(out, ref, rtol, atol)}"
    return "pass", ""


ORT_IR_VERSION = 10
"""The IR version the second opinion stamps: node test models carry the newest IR version
onnx knows, which onnxruntime may not read yet; nothing in a one-node model depends on it."""


def run_onnxruntime(model, inputs: list) -> list:
    """onnxruntime's outputs for the model on the inputs, all fed at run time as ours are."""
    import onnxruntime

    model = type(model).FromString(model.SerializeToString())
    model.ir_version = min(model.ir_version, ORT_IR_VERSION)
    options = onnxruntime.SessionOptions()
    # its warnings and error logs are not the suite's business: a case it cannot run is
    # reported from the exception, and a logged copy would interleave with the table
    options.log_severity_level = 4
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def run_case_onnxruntime(case: NodeCase) -> Result:
    """The same case run by onnxruntime and judged by the same rules: the comparison
    `--onnxruntime` prints next to ours. Its failures are `onnxruntime-error` (it refuses
    the model or the inputs) or a difference category."""
    try:
        model, inputs, expected = case.load()
        outputs = run_onnxruntime(model, inputs)
        category, detail = compare(expected, outputs, case.rtol, case.atol, sequences=True)
    except Exception as err:  # noqa: BLE001 - every failure is counted, none escapes
        category, detail = "onnxruntime-error", " ".join(str(err).split())[:200]
    return Result(case.name, case.op_type, category, detail)


def onnxruntime_reason(err: Exception) -> str:
    """onnxruntime's error in a few words: its `[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED :`
    prefix and its source location dropped, the rest kept (cutting at the last `) ` left
    `node with name ''` of `Could not find an implementation for Attention(23) node ...`)."""
    message = " ".join(str(err).split())
    if message.startswith("[ONNXRuntimeError]"):
        message = message.split(" : ", 3)[-1]
    # a kernel's failure names the C++ function it failed in before the reason
    message = message.rsplit(" was false. ", 1)[-1] if " was false. " in message else message
    return message.rstrip(".")[:160]


def onnxruntime_opinion(model, inputs: list, outputs: list, expected: list,
                        rtol: float, atol: float) -> str:
    """Whether onnxruntime agrees with the expected outputs or with ours: where it agrees
    with us, the case's expected numbers (ONNX's reference) are what is disputed."""
    try:
        theirs = run_onnxruntime(model, inputs)
    except Exception as err:  # noqa: BLE001 - onnxruntime is only a second opinion
        return f" (onnxruntime cannot run it: {onnxruntime_reason(err)})"
    if compare(expected, theirs, rtol, atol)[0] == "pass":
        return " (onnxruntime matches the expected outputs)"
    if compare(theirs, outputs, rtol, atol)[0] == "pass":
        return (
            " (onnxruntime computes the same as glow-mlir: the expected outputs differ from both)"
        )
    return " (onnxruntime differs from both)"


def _difference(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> str:
    """How many elements differ, and the worst finite difference (or the first one, when
    every difference involves inf or nan)."""
    a, b = out.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
        errors = np.abs(a[bad] - b[bad])
    if bad.size == 0:
        return "assert_allclose failed, but no element differs by np.isclose"
    finite = np.isfinite(errors)
    k = int(bad[np.argmax(np.where(finite, errors, -1.0))] if finite.any() else bad[0])
    return (f"{bad.size}/{a.size} elements differ, worst at flat index {k}: "
            f"got {a[k]:.6g}, expected {b[k]:.6g}")


# ---------------------------------------------------------------- the report
def per_op_table(results: list[Result], expected_failures: dict[str, str],
                 onnxruntime: list[Result] | None = None) -> str:
    """Passed/failed per op type and the total over the ops run. `const-in` counts the
    cases run with shape-like inputs bound as constants; `unexpected` the cases whose
    outcome disagrees with the expected-failures list; `ort` (with `onnxruntime`, its
    results on the same cases) how many onnxruntime passes."""
    by_op: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_op[r.op_type].append(r)
    ort_by_op: dict[str, list[Result]] = defaultdict(list)
    for r in onnxruntime or ():
        ort_by_op[r.op_type].append(r)
    width = max([len(op) for op in by_op] + [7])
    ort_head = "     ort" if onnxruntime is not None else ""
    lines = [f"{'op':<{width}}  passed  failed  total{ort_head}  const-in  unexpected"]
    for op in sorted(by_op):
        rs = by_op[op]
        passed = sum(r.passed for r in rs)
        bound = sum(bool(r.bound) for r in rs)
        unexpected = sum((not r.passed) != (r.name in expected_failures) for r in rs)
        ort = f"  {sum(r.passed for r in ort_by_op[op]):6}" if onnxruntime is not None else ""
        lines.append(f"{op:<{width}}  {passed:6}  {len(rs) - passed:6}  {len(rs):5}{ort}  "
                     f"{bound or '':>8}  {unexpected or '':>10}")
    total = len(results)
    passed = sum(r.passed for r in results)
    bound = sum(bool(r.bound) for r in results)
    share = 100.0 * passed / total if total else 0.0
    ort_passed = sum(r.passed for r in onnxruntime or ())
    ort = f"  {ort_passed:6}" if onnxruntime is not None else ""
    lines.append(f"{'TOTAL':<{width}}  {passed:6}  {total - passed:6}  {total:5}{ort}  "
                 f"{bound or '':>8}")
    ops_fully = sum(all(r.passed for r in rs) for rs in by_op.values())
    lines.append(f"{passed}/{total} node test cases of the {len(by_op)} ops pass "
                 f"({share:.1f}%); {ops_fully} ops pass all their cases")
    if onnxruntime is not None:
        ort_share = 100.0 * ort_passed / len(onnxruntime) if onnxruntime else 0.0
        lines.append(f"glow-mlir {passed}/{total}, onnxruntime {ort_passed}/{len(onnxruntime)} "
                     f"({ort_share:.1f}%) on the same cases")
    return "\n".join(lines)


def surprises(results: list[Result], expected_failures: dict[str, str]) -> str:
    """Unlisted failures (regressions) and listed cases that now pass."""
    lines = []
    for r in results:
        if not r.passed and r.name not in expected_failures:
            lines.append(f"FAIL   {r.name}  # {r.category}: {r.detail}")
        elif r.passed and r.name in expected_failures:
            lines.append(f"XPASS  {r.name}  (listed: {expected_failures[r.name]})")
    return "\n".join(lines)


def failure_groups(results: list[Result]) -> str:
    """Failures grouped by category and message, the groups that would unlock the most
    cases first."""
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        if not r.passed:
            key = r.detail if r.category in ("unsupported", "needs-constant", "no-kernel",
                                             "dynamic-shape") else ""
            groups[(r.category, key)].append(r)
    lines = []
    for (category, key), rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ops = Counter(r.op_type for r in rs)
        head = f"{len(rs):4}  {category}" + (f": {key}" if key else "")
        lines.append(head + "   [" + ", ".join(f"{op} {n}" for op, n in sorted(ops.items())) + "]")
        for r in sorted(rs, key=lambda r: (r.op_type, r.name)):
            lines.append(f"        {r.name}" + ("" if key else f"  # {r.detail}"))
    return "\n".join(lines)


# ---------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(  # a usage error is one line and exit 1, as the tools'
        prog="python -m tests.onnx.conformance",
        description="Run ONNX's node test cases of every standard op through glow-mlir.")
    parser.add_argument("--op", action="append", default=[],
                        help="only this op type (repeatable)")
    parser.add_argument("--glow-ops", action="store_true",
                        help="only the ops Glow's own ONNX loader supports (node_cases.LISTED_OPS)")
    parser.add_argument("--onnxruntime", action="store_true",
                        help="also run onnxruntime on the same cases and print its count "
                             "per op and in total next to ours")
    parser.add_argument("-k", dest="substring", default="",
                        help="only cases whose name contains this")
    parser.add_argument("--regenerate", action="store_true",
                        help="rebuild the case cache first")
    parser.add_argument("--constant-inputs", action="store_true",
                        help="bind the shape-like inputs as initializers first, as a "
                             "static compiler's test mode does (the expected-failures "
                             "list does not apply)")
    parser.add_argument("--failures", action="store_true",
                        help="also list every failure, grouped by cause")
    parser.add_argument("--write-expected-failures", action="store_true",
                        help=f"rewrite {EXPECTED_FAILURES.name} from this run's failures "
                             "(only with the whole suite)")
    args = parser.parse_args(argv)

    ops = LISTED_OPS if args.glow_ops else ALL_OPS
    unknown = sorted(set(args.op) - set(ops))
    if unknown:
        parser.error(f"not a standard op{' Glow claims' if args.glow_ops else ''}: "
                     f"{', '.join(unknown)}")
    if args.write_expected_failures and (args.op or args.substring or args.constant_inputs
                                         or args.glow_ops):
        parser.error("--write-expected-failures needs the whole suite as pytest runs it "
                     "(no --op, -k, --glow-ops or --constant-inputs)")
    if args.regenerate:
        node_cases.generate(node_cases.cache_dir())
    # one cache of every op; --glow-ops picks from it rather than rebuilding it for fewer
    cases = [c for c in node_cases.load_cases()
             if c.op_type in ops and (not args.op or c.op_type in args.op)
             and args.substring in c.name]
    if not cases:
        chosen = [f"--op {op}" for op in args.op] + ["--glow-ops"] * args.glow_ops
        chosen += [f"-k {args.substring!r}"] if args.substring else []
        parser.error(f"no node test case matches {' '.join(chosen) or 'at all'} "
                     f"(the case cache is {node_cases.cache_dir()}; --regenerate rebuilds it)")
    expected_failures = {} if args.constant_inputs else read_expected_failures()

    start = time.perf_counter()
    results = [run_case(c, constant_inputs=args.constant_inputs) for c in cases]
    elapsed = time.perf_counter() - start
    ort = [run_case_onnxruntime(c) for c in cases] if args.onnxruntime else None

    print(per_op_table(results, expected_failures, ort))
    print(f"({len(results)} cases in {elapsed:.1f} s)")
    report = "" if args.constant_inputs else surprises(results, expected_failures)
    if report:
        print("\n" + report)
    if args.failures and any(not r.passed for r in results):
        print("\nFailures by cause (cases unlocked per fix):\n" + failure_groups(results))
    if args.write_expected_failures:
        EXPECTED_FAILURES.write_text(format_expected_failures(results))
        print(f"\nwrote {EXPECTED_FAILURES}")
        return 0
    if args.constant_inputs:
        return 0
    return 1 if any(not r.passed and r.name not in expected_failures for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
