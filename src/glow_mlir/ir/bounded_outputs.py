"""Outputs whose length is known only at run time (ONNX NonZero, NonMaxSuppression).

Every shape inside a compiled function is static, so such an output is computed into a
buffer sized for its upper bound (NonZero: every element nonzero), and the op also gives
the length it filled, a 0-d int64 tensor. The importer returns that count as one more
function result, named after the output it measures: `<output>#count@<dim>`. The
compiled model (`runtime/compiled_model.py`) reads the names, hides the counts and trims
dim `<dim>` of each such output to its count after every run. The names survive IRGen,
saved models and the model cache, as every output name does.

Inside the graph such a value may feed the nodes whose output rows follow its rows
(Gather by its indices, GatherND, Slice, Cast, Reshape, Transpose, Concat, element-wise
ops): they compute on the whole buffer and their outputs carry the same count, or one
computed from it (a Slice of the bounded dim); frontends/onnx/bounded.py has the rules,
frontends/onnx/bounded_ops.py those for the nodes that read it whole (Shape, TopK, a
Concat along the bounded dim, NonMaxSuppression, ...).
"""

from __future__ import annotations

import re

_MARK = "#count@"
_PATTERN = re.compile(r"^(?P<output>.*)#count@(?P<dim>\d+)$", re.DOTALL)


def count_name(output: str, dim: int) -> str:
    """The name of the result holding the run-time length of dim `dim` of `output`."""
    return f"{output}{_MARK}{dim}"


def parse_count_name(name: str) -> tuple[str, int] | None:
    """(output, dim) when `name` is a count's name, else None."""
    m = _PATTERN.match(name)
    return (m.group("output"), int(m.group("dim"))) if m else None


def bounded_outputs(names: list[str]) -> list[tuple[int, int, int]]:
    """(output index, count index, dim) of every output trimmed by a count among `names`."""
    index = {n: i for i, n in enumerate(names)}
    found = []
    for i, name in enumerate(names):
        parsed = parse_count_name(name)
        if parsed is not None and parsed[0] in index:
            found.append((index[parsed[0]], i, parsed[1]))
    return found
