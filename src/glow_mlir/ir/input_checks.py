"""What an op needs of an operand's run-time values (indices in range, finite floats).

An op declares these with `input_checks()`; an importer that computes indices from a
model input (ONNX GatherElements, GatherND, ScatterElements, ScatterND: flat indices made
of the input) records them on the function's argument (`add_arg_check`, attribute
`glow.input_checks`). When such a value is a model input, `CompiledModel.check_inputs`
verifies it before any backend runs, so native code never sees an index it would have to
clamp or a roi that would make it loop for a long time (README: input values). Values
computed inside the graph from other values are the kernels' job (the cpu clamps
indices, the interpreter raises)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

# xDSL is imported where it is used: a saved model's checks are made without it

ARG_ATTR = "glow.input_checks"


@dataclass(frozen=True)
class InputCheck:
    """`what` the values are (for the message); valid integers lie in [low, high), or,
    with `sizes`, component k of the last axis in [-sizes[k], sizes[k]) (ONNX index
    tuples, negative ones counting back); `finite` refuses NaN and infinities; `allowed`
    is one more valid integer outside [low, high) (a loss's ignore_index); valid floats
    lie in the closed range `between` (NaN refused) when it is given (an IoU threshold)."""

    what: str
    low: int | None = None
    high: int | None = None
    finite: bool = False
    sizes: tuple[int, ...] = ()
    allowed: int | None = None
    between: tuple[float, float] | None = None

    def problem(self, name: str, x: np.ndarray) -> str | None:
        """A message naming the input, the first bad position and its value, or None."""
        if x.size == 0:
            return None
        if self.finite and np.issubdtype(x.dtype, np.floating):
            bad = ~np.isfinite(x)
            rule = "must be finite"
        elif self.between is not None and np.issubdtype(x.dtype, np.floating):
            lo, hi = self.between
            bad = ~((x >= lo) & (x <= hi))
            rule = f"must be in [{lo:g}, {hi:g}]"
        elif np.issubdtype(x.dtype, np.integer) and self.sizes:
            bounds = np.asarray(self.sizes, np.int64)
            bad = (x < -bounds) | (x >= bounds)
        elif np.issubdtype(x.dtype, np.integer) and self.low is not None and self.high is not None:
            bad = (x < self.low) | (x >= self.high)
            rule = f"must be in [{self.low}, {self.high})"
            if self.allowed is not None:
                bad &= x != self.allowed
                rule += f" or be {self.allowed}"
        else:
            return None
        if not bad.any():
            return None
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        if self.sizes:
            s = self.sizes[pos[-1] % len(self.sizes)] if len(self.sizes) > 1 else self.sizes[0]
            rule = f"must be in [{-s}, {s})"
        return (f"input '{name}' at {list(pos)} is {x[pos].item()}: {self.what} {rule} "
                f"({int(bad.sum())} bad value(s))")


def add_arg_check(fn, index: int, check: InputCheck) -> None:
    """Record `check` on argument `index` of `fn` (a func.func), once."""
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr

    attrs = list(fn.arg_attrs.data) if fn.arg_attrs is not None else []
    entry = dict(attrs[index].data)
    # JSON in a string attribute: one attribute per check, printed and parsed by xDSL as is
    known = list(entry[ARG_ATTR].data) if ARG_ATTR in entry else []
    text = StringAttr(json.dumps(to_dict(check), sort_keys=True))
    if text in known:
        return
    entry[ARG_ATTR] = ArrayAttr([*known, text])
    attrs[index] = DictionaryAttr(entry)
    fn.arg_attrs = ArrayAttr(attrs)


def arg_checks(fn) -> list[tuple[int, InputCheck]]:
    """(argument index, check) recorded on `fn`'s arguments by `add_arg_check`."""
    from xdsl.dialects.builtin import ArrayAttr

    found: list[tuple[int, InputCheck]] = []
    for index, entry in enumerate(fn.arg_attrs.data if fn.arg_attrs is not None else ()):
        for text in entry.data.get(ARG_ATTR, ArrayAttr([])).data:
            found.append((index, from_dict(json.loads(text.data))))
    return found


def to_dict(check: InputCheck) -> dict:
    """`check` as JSON-ready fields (a function argument's attribute, a saved manifest)."""
    fields = {**asdict(check), "sizes": list(check.sizes)}
    for newer in ("allowed", "between"):  # newer than the format: written only when set
        if fields[newer] is None:
            del fields[newer]
    if check.between is not None:
        fields["between"] = list(check.between)
    return fields


def from_dict(fields: dict) -> InputCheck:
    """The check `to_dict` gave (the caller has checked the field types)."""
    between = fields.get("between")
    return InputCheck(**{**fields, "sizes": tuple(fields.get("sizes", ())),
                         "between": None if between is None else tuple(between)})
