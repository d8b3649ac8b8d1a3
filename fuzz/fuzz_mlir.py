#!/usr/bin/env python3
"""Mutation fuzzer for glow-opt.

    python fuzz/fuzz_mlir.py --count 10000 --seed 1 [--seconds S] [--save-failures DIR]

Seeds are every .mlir file under tests/filecheck and examples/, split at `// -----`.
Each input is a seed after one to three mutations, byte-level (flip, insert, delete,
truncate, splice two seeds) or structural (swap operands, wrong element types or shapes,
huge or negative dimensions, a dropped terminator or closing brace, deep nesting, a
duplicated or undefined SSA name, a use moved before its definition, bad attribute
values, unknown or swapped op names). Each runs through glow-opt *in process* (its
`main(argv)`, stdout and stderr captured, SystemExit caught) with a pass pipeline chosen
from glow-mlir's passes (`glow_mlir.conversion.passes.GLOW_PASSES`: passes for the seed's
dialect, or a random pipeline, or none: parse and verify only).

Outcomes:
  ok              exit 0
  user-error      exit 1 with a located diagnostic (`FILE:LINE:COL: error: ...`)
  unlocated       exit 1 with an error that does not say where (a defect: docs/architecture.md
                  §6 asks for file:line:col for IR)
  broken-ir       the input verified, a pass ran, and its output did not verify (a pass
                  that cannot handle its input must refuse it, not produce invalid IR)
  internal-error  `glow-opt: internal error: ...` (a bug the tool caught)
  traceback       a Python traceback was printed, or an exception escaped main()
  hang            the input ran longer than --timeout seconds
  crash           any other ending (another exit status, no message at all)

Prints the counts per class and per pass and the most frequent defect signatures; exits 1
if any defect class is non-zero. The run is deterministic for a given --seed and --count
(with --seconds the number of inputs depends on the machine, their sequence does not).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import random
import re
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from glow_mlir.conversion.passes import GLOW_PASSES as PASSES  # noqa: E402
from glow_mlir.tools.glow_opt import main as glow_opt_main  # noqa: E402

CLASSES = ("ok", "user-error", "unlocated", "broken-ir", "internal-error", "traceback", "hang",
           "crash")
DEFECTS = ("unlocated", "broken-ir", "internal-error", "traceback", "hang", "crash")

# ---------------------------------------------------------------------------- seeds


def load_seeds(root: Path = ROOT) -> list[tuple[str, str]]:
    """(name, text) of every chunk of every .mlir under tests/filecheck and examples/."""
    seeds = []
    files = sorted([*(root / "tests" / "filecheck").rglob("*.mlir"),
                    *(root / "examples").rglob("*.mlir")])
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for i, chunk in enumerate(text.split("// -----")):
            # Comments (RUN/CHECK lines, prose) are noise for the fuzzer; the IR matters.
            lines = [ln for ln in chunk.split("\n") if not re.match(r"\s*//", ln)]
            body = "\n".join(lines).strip()
            if re.search(r"^\s*[%\"a-z_]", body, re.M):
                seeds.append((f"{path.relative_to(root)}#{i}", body + "\n"))
    return seeds


# ---------------------------------------------------------------------------- passes

_GROUP_OF_MODULE = (
    ("glow_mlir.transforms.graph", "graph"),
    ("glow_mlir.conversion.lower_to_instr", "graph"),
    ("glow_mlir.transforms.instr", "instr"),
    ("glow_mlir.conversion.glow_ir_to", "instr"),
    ("glow_mlir.transforms.accel", "accel"),
    ("glow_mlir.conversion.glow_accel_to", "accel"),
    ("glow_mlir.conversion", "llvm"),
)
XDSL_PASSES = ("dce", "cse", "canonicalize")


def pass_groups() -> dict[str, list[str]]:
    """Our registered passes by the dialect they work on (from their module path)."""
    from glow_mlir.conversion.passes import GLOW_PASS_PATHS as _PASS_PATHS

    groups: dict[str, list[str]] = collections.defaultdict(list)
    for name in sorted(PASSES):
        module = _PASS_PATHS[name].split(":")[0]
        group = next((g for prefix, g in _GROUP_OF_MODULE if module.startswith(prefix)),
                     "other")
        groups[group].append(name)
    return dict(groups)


def dialect_of(text: str) -> str:
    if "glow_accel." in text:
        return "accel"
    if "glow_ir." in text:
        return "instr"
    if re.search(r"\bglow\.", text):
        return "graph"
    return "llvm"


def choose_pipeline(rng: random.Random, text: str, groups: dict[str, list[str]]) -> list[str]:
    roll = rng.random()
    if roll < 0.2:
        return []  # parse and verify only
    everything = sorted({p for ps in groups.values() for p in ps} | set(XDSL_PASSES))
    if roll < 0.75:
        own = groups.get(dialect_of(text), everything)
        return rng.sample(own, k=min(len(own), rng.choice((1, 1, 1, 2, 3))))
    return [rng.choice(everything) for _ in range(rng.choice((1, 2, 3, 4)))]


# ---------------------------------------------------------------------------- mutations

TOKENS = ["%", "%0", "@", "{", "}", "(", ")", "<", ">", "[", "]", ",", ":", "=", "->", "x",
          "?", "-1", "0", "4294967296", "1099511627776", "9223372036854775807", "f32", "i8",
          "i64", "f16", "bf16", "index", "tensor<", "memref<", "dense<", "array<i64: ",
          "\"", "#", "!glow.quant<", "func.return", "glow_ir.func", "^bb0:", "\n", " ",
          "\\", "\x00", "\xff", "é", "1.0e400", "nan", "inf", "0x7FC00000"]
ELEM_TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "si8",
              "index", "complex<f32>", "none", "!glow.quant<i8, 0.5, 0>", "vector<4xf32>",
              "tensor<4xf32>", "memref<2xf32>"]
DIMS = ["0", "1", "2", "3", "7", "?", "1099511627776", "4294967297",
        "9223372036854775807", "18446744073709551616", "1024x1024x1024", "-1", "00"]
INTS = ["0", "-1", "1", "2", "-9223372036854775808", "9223372036854775807",
        "18446744073709551616", "1099511627776", "65536", "3", "-2", "4294967295"]
SHAPED = re.compile(r"\b(tensor|memref|vector)<([^<>]*)>")
SSA_DEF = re.compile(r"(%[A-Za-z0-9_$.-]+)(?:#\d+)?(?:\s*,\s*%[A-Za-z0-9_$.-]+)*\s*=")
SSA = re.compile(r"%[A-Za-z0-9_$.-]+")
OP_NAME = re.compile(r"\b((?:glow|glow_ir|glow_accel|func|arith|memref|scf|cf|llvm|math)"
                     r"\.[a-z_][a-z0-9_.]*)")
INT = re.compile(r"(?<![\w.%@#])-?\d+(?![\w.])")


def _spot(rng: random.Random, matches: list[re.Match[str]]) -> re.Match[str] | None:
    return rng.choice(matches) if matches else None


def _sub(text: str, m: re.Match[str], new: str, group: int = 0) -> str:
    return text[:m.start(group)] + new + text[m.end(group):]


class Mutator:
    def __init__(self, rng: random.Random, seeds: Sequence[str], op_names: Sequence[str]):
        self.rng = rng
        self.seeds = seeds
        self.op_names = op_names
        self.mutations = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("m_")]

    def mutate(self, text: str) -> tuple[str, list[str]]:
        applied = []
        for _ in range(self.rng.choice((0, 1, 1, 1, 1, 2, 2, 3))):  # 0: the seed itself
            fn = self.rng.choice(self.mutations)
            new = fn(text)
            if new is not None:
                text = new
                applied.append(fn.__name__[2:])
        return text, applied

    # -------- byte level
    def m_flip(self, t: str) -> str | None:
        b = bytearray(t.encode("utf-8", errors="surrogateescape"))
        if not b:
            return None
        for _ in range(self.rng.randint(1, 4)):
            b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
        return b.decode("utf-8", errors="surrogateescape")

    def m_insert(self, t: str) -> str:
        i = self.rng.randint(0, len(t))
        return t[:i] + self.rng.choice(TOKENS) + t[i:]

    def m_delete(self, t: str) -> str | None:
        if not t:
            return None
        i = self.rng.randrange(len(t))
        return t[:i] + t[i + self.rng.randint(1, 16):]

    def m_truncate(self, t: str) -> str:
        return t[:self.rng.randint(0, len(t))]

    def m_splice(self, t: str) -> str:
        other = self.rng.choice(self.seeds)
        return t[:self.rng.randint(0, len(t))] + other[self.rng.randint(0, len(other)):]

    # -------- lines
    def _lines(self, t: str) -> list[str]:
        return t.split("\n")

    def m_swap_lines(self, t: str) -> str | None:
        ls = self._lines(t)
        defs = [i for i, ln in enumerate(ls) if SSA_DEF.search(ln)]
        if len(ls) < 2:
            return None
        i = self.rng.choice(defs) if defs else self.rng.randrange(len(ls) - 1)
        j = min(len(ls) - 1, i + self.rng.randint(1, 3))
        ls[i], ls[j] = ls[j], ls[i]
        return "\n".join(ls)

    def m_drop_line(self, t: str) -> str | None:
        ls = self._lines(t)
        cands = [i for i, ln in enumerate(ls) if re.search(r"return|yield|^\s*}|terminator|"
                                                           r"dealloc|weight|alloc", ln)]
        if not cands:
            return None
        del ls[self.rng.choice(cands)]
        return "\n".join(ls)

    def m_duplicate_line(self, t: str) -> str | None:
        ls = self._lines(t)
        i = self.rng.randrange(len(ls))
        ls.insert(self.rng.randint(0, len(ls)), ls[i])
        return "\n".join(ls)

    def m_drop_brace(self, t: str) -> str | None:
        spots = [m for m in re.finditer(r"[{}()<>\[\]]", t)]
        m = _spot(self.rng, spots)
        return None if m is None else _sub(t, m, "")

    # -------- SSA names
    def m_duplicate_ssa(self, t: str) -> str | None:
        defs = list(SSA_DEF.finditer(t))
        if len(defs) < 2:
            return None
        a, b = self.rng.sample(defs, 2)
        return _sub(t, b, a.group(1), 1)

    def m_undefined_ssa(self, t: str) -> str | None:
        m = _spot(self.rng, list(SSA.finditer(t)))
        return None if m is None else _sub(t, m, self.rng.choice(("%nowhere", "%999", "%")))

    def m_swap_operands(self, t: str) -> str | None:
        pairs = list(re.finditer(r"(%[\w$.-]+)(\s*,\s*)(%[\w$.-]+)", t))
        m = _spot(self.rng, pairs)
        if m is None:
            return None
        return t[:m.start()] + m.group(3) + m.group(2) + m.group(1) + t[m.end():]

    def m_replace_operand(self, t: str) -> str | None:
        uses = list(SSA.finditer(t))
        if len(uses) < 2:
            return None
        a, b = self.rng.sample(uses, 2)
        return _sub(t, a, b.group(0))

    # -------- types and shapes
    def m_shape(self, t: str) -> str | None:
        m = _spot(self.rng, list(SHAPED.finditer(t)))
        if m is None:
            return None
        parts = m.group(2).split("x")
        kind = self.rng.randrange(4)
        if kind == 0 and len(parts) > 1:  # change a dimension
            parts[self.rng.randrange(len(parts) - 1)] = self.rng.choice(DIMS)
        elif kind == 1:  # change the element type
            parts[-1] = self.rng.choice(ELEM_TYPES)
        elif kind == 2:  # add or remove a dimension
            if len(parts) > 1 and self.rng.random() < 0.5:
                del parts[self.rng.randrange(len(parts) - 1)]
            else:
                parts.insert(0, self.rng.choice(DIMS))
        else:  # huge shape
            parts = [self.rng.choice(("1099511627776", "65536", "4294967296"))] * \
                self.rng.randint(1, 3) + parts[-1:]
        return _sub(t, m, f"{m.group(1)}<{'x'.join(parts)}>")

    def m_type_kind(self, t: str) -> str | None:
        m = _spot(self.rng, list(SHAPED.finditer(t)))
        if m is None:
            return None
        other = self.rng.choice(("tensor", "memref", "vector", "!glow.quant", "f32",
                                 "tensor<*xf32>", "none"))
        if "<" in other or other in ("f32", "none"):
            return _sub(t, m, other)
        return _sub(t, m, f"{other}<{m.group(2)}>")

    # -------- attributes and numbers
    def m_int(self, t: str) -> str | None:
        m = _spot(self.rng, list(INT.finditer(t)))
        return None if m is None else _sub(t, m, self.rng.choice(INTS))

    def m_attr(self, t: str) -> str | None:
        spots = list(re.finditer(r"(\w+)\s*=\s*(array<[^>]*>|dense<[^>]*>|-?\d+ : \w+|"
                                 r"\"[^\"]*\"|[\w.]+)", t))
        m = _spot(self.rng, spots)
        if m is None:
            return None
        new = self.rng.choice((
            "array<i64>", "array<i64: -1, -1>", "array<i64: 0, 0>",
            "array<i64: 1, 1, 1, 1, 1, 1, 1, 1>", "array<i32: 1, 1>", "array<f32: 1.0>",
            "-5 : i64", "0 : i64", "9223372036854775807 : i64", "1 : i8", "\"bogus\"",
            "unit", "dense<[1.0, 2.0]> : tensor<2xf32>", "dense<1> : tensor<4294967296xi8>",
            "[1, 2]", "{a = 1}", "@nowhere", "affine_map<(d0) -> (d0)>", "1.5 : f32",
            "array<i64: 1099511627776, 1099511627776>", "true", "NHWC", "\"NCHW\""))
        return _sub(t, m, new, 2)

    def m_rename_attr(self, t: str) -> str | None:
        m = _spot(self.rng, list(re.finditer(r"\b(\w+)(\s*=\s*)", t)))
        if m is None:
            return None
        return _sub(t, m, self.rng.choice(("kernels", "strides", "pads", "group", "axis",
                                           "shuffle", "offsets", "bogus", "sym_name",
                                           "dilation", "layout", "value", "size")), 1)

    # -------- ops
    def m_op_name(self, t: str) -> str | None:
        m = _spot(self.rng, list(OP_NAME.finditer(t)))
        if m is None:
            return None
        if self.rng.random() < 0.2:
            new = m.group(1).split(".")[0] + ".no_such_op"
        else:
            same = [n for n in self.op_names if n.split(".")[0] == m.group(1).split(".")[0]]
            new = self.rng.choice(same or self.op_names)
        return _sub(t, m, new, 1)

    def m_generic_op(self, t: str) -> str | None:
        ls = self._lines(t)
        i = self.rng.randrange(len(ls))
        op = self.rng.choice(self.op_names)
        ls.insert(i, self.rng.choice((
            f'"{op}"() : () -> ()',
            f'%gen = "{op}"() : () -> tensor<4xf32>',
            f'"{op}"() ({{}}) : () -> ()',
            f'"{op}"(%gen, %gen) {{x = 1}} : (f32, f32) -> ()',
            f'%gen = "{op}"() <{{value = 1 : i64}}> : () -> memref<2xf32>')))
        return "\n".join(ls)

    # -------- nesting
    def m_deep_nesting(self, t: str) -> str:
        depth = self.rng.choice((50, 300, 2000, 20000))
        kind = self.rng.randrange(4)
        if kind == 0:
            return ("builtin.module {\n" * depth) + t + ("}\n" * depth)
        if kind == 1:
            m = _spot(self.rng, list(re.finditer(r"dense<", t)))
            if m is not None:
                close = t.find(">", m.end())
                if close > 0:
                    return t[:m.end()] + "[" * depth + "1.0" + "]" * depth + t[close:]
            return t
        if kind == 2:
            i = self.rng.randint(0, len(t))
            return t[:i] + "tensor<" * depth + "f32" + ">" * depth + t[i:]
        i = self.rng.randint(0, len(t))
        return t[:i] + "(" * depth + t[i:]


# ---------------------------------------------------------------------------- running


class FuzzTimeout(SystemExit):
    """Raised by the alarm; a SystemExit so that the tool's catch-all lets it through."""


@dataclass
class Outcome:
    cls: str
    status: object
    stdout: str
    stderr: str
    seconds: float


LOCATED = re.compile(r"^\S.*?:\d+:\d+: error: |\S+\.mlir:\d+:\d+\b|#\d+ in @\S+", re.M)
"""`FILE:LINE:COL: error: ...`, or a pass's one-line refusal naming `... at FILE:LINE:COL`
(or `#INDEX in @FUNC`, ir.text.position_text's place of an op a pass created)."""
TRACEBACK = re.compile(r"^Traceback \(most recent call last\):$", re.M)
INTERNAL = re.compile(r"^glow-opt: internal error: ", re.M)
LOCATED_GLOBAL = re.compile(r"^glow-opt: error: (invalid pass pipeline|cannot read)", re.M)


def _alarm(signum, frame):  # noqa: ARG001
    raise FuzzTimeout(124)


_broken_after: list[str] = []


def _watch_verify_after_passes() -> None:
    """Wrap glow-opt's verify_module so that a failure of the verification glow-opt runs
    after each pass (in its `after_each_pass` hook) is recorded, with the pass's name."""
    import glow_mlir.tools.glow_opt as tool

    verify = tool.verify_module
    if getattr(verify, "fuzz_watched", False):
        return

    def watched(module):
        try:
            verify(module)
        except BaseException:
            frame = sys._getframe(1)
            if frame.f_code.co_name == "after_each_pass":
                prev = frame.f_locals.get("prev")
                _broken_after.append(getattr(prev, "name", "?"))
            raise

    watched.fuzz_watched = True  # type: ignore[attr-defined]
    tool.verify_module = watched


def run_glow_opt(argv: list[str], timeout: float) -> Outcome:
    """glow-opt's main(argv) in this process, classified."""
    out, err = io.StringIO(), io.StringIO()
    status: object = None
    escaped = False
    _watch_verify_after_passes()
    _broken_after.clear()
    previous = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                signal.setitimer(signal.ITIMER_REAL, timeout)
                try:
                    glow_opt_main(argv)
                    status = 0
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except FuzzTimeout:
                status = "timeout"
            except SystemExit as stop:
                status = stop.code if stop.code is not None else 0
            except BaseException as exc:  # noqa: BLE001 - what escaped the tool
                import traceback

                escaped = True
                status = f"escaped {type(exc).__name__}"
                traceback.print_exc(file=err)
    finally:
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    so, se = out.getvalue(), err.getvalue()
    if status == "timeout":
        cls = "hang"
    elif escaped or TRACEBACK.search(so + se):
        cls = "traceback"
    elif INTERNAL.search(se):
        cls = "internal-error"
    elif _broken_after:
        cls = "broken-ir"
        se = f"after {_broken_after[0]}: {se}"
    elif status == 0:
        cls = "ok"
    elif status == 1 and (LOCATED.search(se) or LOCATED_GLOBAL.search(se)):
        cls = "user-error"
    elif status == 1 and se.strip():
        cls = "unlocated"
    else:
        cls = "crash"
    return Outcome(cls, status, so, se, seconds)


def signature(outcome: Outcome) -> str:
    """A short key that groups defects with one cause."""
    text = outcome.stderr.strip()
    if outcome.cls == "traceback":
        lines = [ln for ln in text.split("\n") if ln.strip()]
        frames = [ln.strip() for ln in lines if ln.strip().startswith("File ")]
        where = frames[-1] if frames else ""
        return f"{lines[-1] if lines else ''} @ {where}"[:200]
    if outcome.cls == "internal-error":
        m = re.search(r"internal error: (.*)", text)
        text = m.group(1) if m else text
    elif outcome.cls == "hang":
        return "hang"
    text = re.sub(r"\d+", "N", text.split("\n")[0])
    text = re.sub(r"'[^']*'", "'_'", text)
    return text[:160]


# ---------------------------------------------------------------------------- driver


@contextlib.contextmanager
def memory_limit(gib: float | None) -> Iterator[None]:
    """Lower the soft address-space limit (a mutation asking for 2^40 elements must fail
    to allocate, not take the machine), restoring it afterwards."""
    if not gib:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = int(gib * 2**30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@dataclass
class Report:
    counts: collections.Counter = field(default_factory=collections.Counter)
    per_pass: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    signatures: dict = field(default_factory=lambda: collections.defaultdict(list))
    inputs: int = 0
    seconds: float = 0.0

    @property
    def defects(self) -> int:
        return sum(self.counts[c] for c in DEFECTS)

    def format(self) -> str:
        out = [f"glow-opt fuzz: {self.inputs} inputs in {self.seconds:.1f} s"]
        out.append("  " + "  ".join(f"{c}={self.counts[c]}" for c in CLASSES))
        out.append("per pass (an input counts for every pass of its pipeline):")
        width = max([len(p) for p in self.per_pass] + [12])
        out.append(f"  {'pass':<{width}} " + " ".join(f"{c:>10}" for c in CLASSES))
        for name in sorted(self.per_pass):
            row = self.per_pass[name]
            out.append(f"  {name:<{width}} " + " ".join(f"{row[c]:>10}" for c in CLASSES))
        if self.signatures:
            out.append("defects by signature (count, first input):")
            for sig, ids in sorted(self.signatures.items(), key=lambda kv: -len(kv[1])):
                out.append(f"  {len(ids):5d}  #{ids[0]}  {sig}")
        return "\n".join(out)


def fuzz(count: int | None = None, seconds: float | None = None, seed: int = 0,
         save_failures: Path | None = None, timeout: float = 10.0,
         verbose: bool = False, seeds: list[tuple[str, str]] | None = None) -> Report:
    rng = random.Random(seed)
    seeds = seeds if seeds is not None else load_seeds()
    texts = [t for _, t in seeds]
    op_names = sorted({m.group(1) for t in texts for m in OP_NAME.finditer(t)})
    groups = pass_groups()
    mutator = Mutator(rng, texts, op_names)
    report = Report()
    start = time.perf_counter()
    if save_failures:
        save_failures.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fuzz-mlir-") as tmp:
        path = Path(tmp) / "input.mlir"
        i = 0
        while True:
            if count is not None and i >= count:
                break
            if seconds is not None and time.perf_counter() - start >= seconds:
                break
            if count is None and seconds is None:
                break
            seed_name, seed_text = rng.choice(seeds)
            text, applied = mutator.mutate(seed_text)
            pipeline = choose_pipeline(rng, text, groups)
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
            argv = [str(path)] + (["-p", ",".join(pipeline)] if pipeline else [])
            outcome = run_glow_opt(argv, timeout)
            report.counts[outcome.cls] += 1
            for name in pipeline or ["(parse+verify)"]:
                report.per_pass[name][outcome.cls] += 1
            if verbose:
                print(f"#{i} {outcome.cls:14} {outcome.seconds:6.2f}s {seed_name} "
                      f"{'+'.join(applied)} [{','.join(pipeline)}]", file=sys.stderr)
            if outcome.cls in DEFECTS:
                report.signatures[signature(outcome)].append(i)
                if save_failures:
                    stem = save_failures / f"{i:06d}-{outcome.cls}"
                    stem.with_suffix(".mlir").write_bytes(path.read_bytes())
                    stem.with_suffix(".txt").write_text(
                        f"seed: {seed_name}\nmutations: {' '.join(applied)}\n"
                        f"command: ./glow-opt {stem.with_suffix('.mlir')}"
                        f"{' -p ' + repr(','.join(pipeline)) if pipeline else ''}\n"
                        f"status: {outcome.status}\n--- stderr\n{outcome.stderr}")
            i += 1
        report.inputs = i
    report.seconds = time.perf_counter() - start
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, help="number of inputs (default 1000 without "
                    "--seconds)")
    ap.add_argument("--seconds", type=float, help="stop after this many seconds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-failures", type=Path, metavar="DIR",
                    help="write each failing input (.mlir) and its command and output (.txt)")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds one input may take before it counts as a hang")
    ap.add_argument("--memory-gib", type=float, default=4.0,
                    help="address-space limit while fuzzing (0: none)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per input")
    args = ap.parse_args(argv)
    count = args.count if args.count is not None or args.seconds else 1000
    with memory_limit(args.memory_gib):
        report = fuzz(count, args.seconds, args.seed, args.save_failures, args.timeout,
                      args.verbose)
    print(report.format())
    return 1 if report.defects else 0


if __name__ == "__main__":
    sys.exit(main())
