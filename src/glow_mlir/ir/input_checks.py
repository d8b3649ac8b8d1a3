"""What an op needs of an operand's run-time values (indices in range, finite floats).

An op declares these with `input_checks()`; when such an operand is a model input,
`CompiledModel.check_inputs` verifies the values before any backend runs, so native code
never sees an index it would have to clamp or a roi that would make it loop for ever
(README: "Inputs are checked"). Values computed inside the graph are the kernels' job
(the cpu clamps indices, the interpreter raises)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InputCheck:
    """`what` the values are (for the message); valid integers lie in [low, high);
    `finite` refuses NaN and infinities."""

    what: str
    low: int | None = None
    high: int | None = None
    finite: bool = False

    def problem(self, name: str, x: np.ndarray) -> str | None:
        """A message naming the input, the first bad position and its value, or None."""
        if x.size == 0:
            return None
        if self.finite and np.issubdtype(x.dtype, np.floating):
            bad = ~np.isfinite(x)
            rule = "must be finite"
        elif self.low is not None and self.high is not None and np.issubdtype(x.dtype, np.integer):
            bad = (x < self.low) | (x >= self.high)
            rule = f"must be in [{self.low}, {self.high})"
        else:
            return None
        if not bad.any():
            return None
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        return (f"input '{name}' at {list(pos)} is {x[pos].item()}: {self.what} {rule} "
                f"({int(bad.sum())} bad value(s))")
