"""xDSL plugin entry point (group `xdsl.universe`): `xdsl-opt` sees our dialects and passes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _glow() -> Dialect:
    from glow_mlir.dialects.glow import Glow

    return Glow


DIALECTS: dict[str, Callable[[], Dialect]] = {"glow": _glow}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {}

GLOW_UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
