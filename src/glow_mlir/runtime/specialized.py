"""Compiling at the first call: one statically shaped compile per input signature.

Glow compiles statically shaped graphs. A model whose input dims are unbound (symbolic,
-1, missing), or whose shape-determining inputs (Reshape's shape, Slice's starts,
TopK's K, Resize's sizes, ...) arrive as graph inputs at run time, cannot be compiled
ahead of the call. `SpecializingModel` waits for the call, as a JIT would: the signature
is every input's shape and dtype plus the values of the inputs the importer needs as
constants; a miss compiles the model with those shapes bound (`input_shapes`) and those
inputs folded into initializers, so each compiled function is static as always. A
bounded LRU keeps one `CompiledModel` per signature (`cache_info()`).

Which inputs to fold is learned, not declared: the importer reports a value it needs at
compile time as an `UnsupportedOnnxError` entry "(input #i 'name') is computed at run
time"; we trace that value back to the graph inputs it is computed from (stopping at
`Shape`/`Size`, whose values are fixed by the bound shapes), fold them and import again.
The set only grows, and is part of the signature from then on. Folding an input that
carries data (Pad's constant value, a value computed inside a subgraph, which folds every
integer input) is still correct: it only makes more signatures.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from glow_mlir.backends import DEFAULT_BACKEND
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import (
    CompiledModel,
    InputError,
    as_array,
    call_feeds,
    fmt_dtype,
)

RUNTIME_VALUE = re.compile(r"\(input #\d+ '([^']+)'\) is computed at run time")
"""How `Node.require_const` names a value the importer needs at compile time."""

SHAPE_ONLY_OPS = frozenset({"Shape", "Size"})
"""Ops whose output depends on their input's shape only: a trace stops there."""

DEFAULT_MAX_ENTRIES = 8

INTEGER_TYPES = frozenset({6, 7, 2, 3, 4, 5, 12, 13})
"""ONNX's INT32, INT64, UINT8, INT8, UINT16, INT16, UINT32, UINT64 (`TensorProto`)."""


COMPILE_ARGUMENTS = frozenset({"backend", "optimize", "disable_passes", "verbose", "progress",
                               "cache"})
"""The options of `compile_model` a SpecializingModel passes on; the rest are the
backend's own."""


def check_compile_options(options: Mapping[str, Any]) -> None:
    """`compile_model`'s checks of the backend, its options and the disabled passes, made
    when the model is made rather than at its first call."""
    from glow_mlir.runtime.compiled_model import checked_options

    checked_options(options.get("backend", DEFAULT_BACKEND), options.get("disable_passes", ()),
                    {k: v for k, v in options.items() if k not in COMPILE_ARGUMENTS})


class SpecializeError(UserError):
    """A `specialize=` option glow-mlir does not know, or a model it cannot specialize."""


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    entries: int
    max_entries: int
    evictions: int


class SpecializingModel:
    """An ONNX model compiled at each new input signature; runs like a `CompiledModel`."""

    def __init__(self, model, max_entries: int = DEFAULT_MAX_ENTRIES,
                 **compile_options: Any):
        import onnx

        from glow_mlir.frontends.onnx.loading import load_model

        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
            raise SpecializeError(f"max_specializations must be a positive int, "
                                  f"got {max_entries!r}")
        check_compile_options(compile_options)
        proto, base_dir = load_model(model)
        copy = onnx.ModelProto()
        copy.CopyFrom(proto)
        onnx.external_data_helper.load_external_data_for_model(copy, base_dir)
        self._proto = copy
        self._options = compile_options
        self.max_entries = max_entries
        initializers = {t.name for t in copy.graph.initializer}
        self._initializers = initializers
        self._inputs = [i for i in copy.graph.input if i.name not in initializers]
        others = [f"'{i.name}' ({i.type.WhichOneof('value') or 'untyped'})"
                  for i in self._inputs if i.type.WhichOneof("value") != "tensor_type"]
        if others:  # a signature is made of tensor shapes and values
            raise SpecializeError(f"specialize='first-call' takes tensor inputs only, not "
                                  f"{', '.join(others)}")
        self.input_names = [i.name for i in self._inputs]
        self.output_names = [o.name for o in copy.graph.output]
        self.folded: set[str] = set()
        """Inputs whose values the compiled functions hold as constants."""
        self._entries: OrderedDict[tuple, CompiledModel] = OrderedDict()
        self._hits = self._misses = self._evictions = 0
        self._last: tuple[CompiledModel, dict[str, np.ndarray]] | None = None
        self._lock = threading.Lock()
        """Held while a call learns, compiles or reads the cache (they share `folded` and
        the entries); the compiled functions run outside it, in parallel as
        `CompiledModel` allows."""

    # ------------------------------------------------------------------ the cache
    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._entries), self.max_entries,
                         self._evictions)

    def cache_clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._hits = self._misses = self._evictions = 0

    def signature(self, arrays: Mapping[str, np.ndarray]) -> tuple:
        """Each input's shape and dtype, and the bytes of each folded input."""
        return tuple((n, arrays[n].shape, arrays[n].dtype.str,
                      arrays[n].tobytes() if n in self.folded else None)
                     for n in self.input_names)

    # ------------------------------------------------------------------ the last run
    # What a `CompiledModel` tells about itself, told here of the function the last run
    # used (a hit or a compile): each signature has a function of its own, and before
    # the first run there is none.
    @property
    def last(self) -> CompiledModel:
        """The compiled function the last run used."""
        return self._last_run()[0]

    def _last_run(self) -> tuple[CompiledModel, dict[str, np.ndarray]]:
        if self._last is None:
            raise SpecializeError("nothing is compiled before the first run: a "
                                  "SpecializingModel compiles for the inputs of each call; "
                                  "run it first (its input_shapes, memory, ... are then "
                                  "those of the last run's function)")
        return self._last

    @property
    def backend(self) -> str:
        return self._options.get("backend", DEFAULT_BACKEND)

    @property
    def input_shapes(self) -> dict[str, tuple[int, ...]]:
        """Every input's shape at the last run, the folded inputs' too."""
        return {n: a.shape for n, a in self._last_run()[1].items()}

    @property
    def input_dtypes(self) -> dict[str, np.dtype]:
        """Every input's dtype at the last run, the folded inputs' too."""
        return {n: a.dtype for n, a in self._last_run()[1].items()}

    @property
    def output_shapes(self) -> dict[str, tuple[int, ...]]:
        return self.last.output_shapes

    @property
    def module(self):
        """The last run's function's module (`CompiledModel.module`: what its backend
        runs, e.g. the planned instruction IR)."""
        return self.last.module

    @property
    def origin(self) -> str:
        """Where the last run's function came from: "compiled" or "cache" (the model
        cache), as `CompiledModel.origin`."""
        return self.last.origin

    @property
    def executor(self):
        return self.last.executor

    @property
    def memory(self):
        """The last run's function's `MemoryReport` (`CompiledModel.memory`)."""
        return self.last.memory

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The last run's function's state (`CompiledModel.state`): each function has its
        own."""
        return self.last.state

    @property
    def accel_report(self):
        return self.last.accel_report

    @property
    def trace(self) -> dict:
        """The last run's function's trace (`CompiledModel.trace`; compile with
        trace=True)."""
        return self.last.trace

    def write_trace(self, path) -> None:
        self.last.write_trace(path)

    def save(self, path) -> None:
        """Refused: a saved model has one signature. Save `model.last` (the last run's
        function, whose folded inputs are constants in it) instead."""
        if self._last is None:  # model.last raises until a run: say so, not "save it"
            raise SpecializeError("a SpecializingModel compiles one function per input "
                                  "signature, at its call, and a saved model holds one: run "
                                  "it first, then save model.last (the last run's function)")
        raise SpecializeError("a SpecializingModel compiles one function per input signature "
                              "and a saved model holds one: save model.last (the last run's "
                              "function; its folded inputs "
                              f"{sorted(self.folded) or '(none)'} are constants in it)")

    # ------------------------------------------------------------------ running
    def run(self, inputs: Mapping[str, object]) -> list[np.ndarray]:
        arrays = self._check(inputs)
        with self._lock:
            compiled, folded = self._function_for(arrays)
        return compiled.run({n: a for n, a in arrays.items() if n not in folded})

    def _function_for(self, arrays: dict[str, np.ndarray]) -> tuple[CompiledModel, set[str]]:
        """The function for this call's signature (compiled on a miss) and the inputs it
        holds as constants; under the lock."""
        key = self.signature(arrays)
        compiled = self._entries.get(key)
        if compiled is not None:
            self._hits += 1
            self._entries.move_to_end(key)
        else:
            self._misses += 1
            compiled = self._compile(arrays)
            key = self.signature(arrays)  # the folded set may have grown
            self._entries[key] = compiled
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
                self._evictions += 1
        self._last = compiled, arrays
        return compiled, set(self.folded)

    def __call__(self, *inputs: object, **named: object) -> list[np.ndarray]:
        """As `CompiledModel.__call__`: positional inputs, one dict or keywords."""
        return self.run(call_feeds(self.input_names, inputs, named))

    def __repr__(self) -> str:
        return (f"SpecializingModel(inputs={self.input_names}, outputs={self.output_names}, "
                f"{self.cache_info()})")

    def check_inputs(self, inputs: Mapping[str, object]) -> list[np.ndarray]:
        """The inputs as arrays in the model's order, checked as a run checks them (as
        `CompiledModel.check_inputs`; what the shapes may be is the first call's to say)."""
        arrays = self._check(inputs)
        return [arrays[n] for n in self.input_names]

    def _check(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """The inputs as arrays, or one InputError listing every problem: names, dtypes,
        ranks and the declared fixed dims (the rest is what a signature specializes)."""
        from glow_mlir.frontends.onnx.dtypes import is_supported, numpy_dtype
        from glow_mlir.frontends.onnx.input_shapes import declared_dims

        if not isinstance(inputs, Mapping):
            raise InputError(f"inputs must be a dict of name -> array, got {type(inputs).__name__}")
        problems = [f"unknown input '{n}' (the model's inputs: "
                    f"{', '.join(repr(m) for m in self.input_names) or 'none'})"
                    for n in inputs if n not in self.input_names]
        arrays: dict[str, np.ndarray] = {}
        for info in self._inputs:
            name = info.name
            if name not in inputs:
                problems.append(f"missing input '{name}'")
                continue
            x = as_array(inputs[name])
            arrays[name] = x
            elem = info.type.tensor_type.elem_type
            if elem and is_supported(elem) and x.dtype != numpy_dtype(elem):
                problems.append(f"input '{name}' has dtype {fmt_dtype(x.dtype)}; expected "
                                f"{fmt_dtype(numpy_dtype(elem))}")
            dims = declared_dims(info)
            if dims is None:
                continue
            if len(dims) != x.ndim:
                problems.append(f"input '{name}' has shape {x.shape} (rank {x.ndim}); the "
                                f"model declares rank {len(dims)}")
                continue
            for i, (d, s) in enumerate(zip(dims, x.shape)):
                if isinstance(d, int) and d not in (0, s):
                    problems.append(f"input '{name}' has shape {x.shape}; the model declares "
                                    f"dim {i} as {d}")
                    break
        if problems:
            raise InputError("; ".join(problems))
        return arrays

    # ------------------------------------------------------------------ compiling
    def _compile(self, arrays: dict[str, np.ndarray]) -> CompiledModel:
        from glow_mlir.frontends.onnx import OnnxImportError, UnsupportedOnnxError
        from glow_mlir.runtime.compiled_model import compile_model

        while True:
            model = self._folded_model(arrays)
            shapes = {n: a.shape for n, a in arrays.items() if n not in self.folded}
            try:
                return compile_model(model, input_shapes=shapes, **self._options)
            except UnsupportedOnnxError as err:
                needed = self._inputs_behind(err)
                if not needed or needed <= self.folded:
                    raise  # an op or form the importer lacks, whatever the values
                self.folded |= needed
            except OnnxImportError as err:  # a value the node cannot take (TopK's k = 0)
                raise self._with_values(err, arrays) from err

    def _with_values(self, err: UserError, arrays: dict[str, np.ndarray]) -> UserError:
        """A compile that failed on this call's values: an InputError naming the inputs
        folded into the model and their values (the importer's message names a node)."""
        if not self.folded:
            return err
        values = ", ".join(f"'{n}' = {np.array2string(arrays[n], threshold=8)}"
                           for n in sorted(self.folded))
        return InputError(f"the values of input(s) {values} make a model that does not "
                          f"compile: {err}")

    def _folded_model(self, arrays: dict[str, np.ndarray]):
        """The model with the folded inputs as initializers holding this call's values."""
        import onnx
        from onnx import numpy_helper

        if not self.folded:
            return self._proto
        model = onnx.ModelProto()
        model.CopyFrom(self._proto)
        graph = model.graph
        kept = [i for i in graph.input if i.name not in self.folded]
        del graph.input[:]
        graph.input.extend(kept)
        graph.initializer.extend(numpy_helper.from_array(arrays[n], n) for n in
                                 self.input_names if n in self.folded)
        return model

    def _inputs_behind(self, err) -> set[str]:
        """The graph inputs the run-time values `err` reports are computed from; empty
        when something else is unsupported too (folding would not make it compile)."""
        names = []
        for entry in err.entries:
            found = RUNTIME_VALUE.findall(entry.why)
            if not found:
                return set()
            names += found
        producers = {o: node for node in self._proto.graph.node for o in node.output}
        graph_inputs = set(self.input_names)
        result, seen, todo = set(), set(), list(names)
        untraced = False
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in graph_inputs:
                result.add(name)
            node = producers.get(name)
            if node is not None and node.op_type not in SHAPE_ONLY_OPS:
                todo += [i for i in node.input if i]
            elif node is None and name not in graph_inputs:
                untraced |= name not in self._initializers
        if untraced:
            # A value made inside a model-local function the importer inlined (or a
            # subgraph) is not traced through its body: fold every integer input then,
            # which is what shape-like inputs are.
            result |= {i.name for i in self._inputs
                       if i.type.tensor_type.elem_type in INTEGER_TYPES}
        return result

