"""Our dialects by name, each imported when a context first needs it: what
`make_context` (`glow_mlir.dialects.context`) registers and `universe.py` advertises to
xDSL. Light to import: no xDSL at run time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.ir import Dialect


def _glow() -> Dialect:
    from glow_mlir.dialects.glow import Glow

    return Glow


def _glow_ir() -> Dialect:
    from glow_mlir.dialects.glow_ir import GlowIR

    return GlowIR


def _glow_accel() -> Dialect:
    from glow_mlir.dialects.glow_accel import GlowAccel

    return GlowAccel


def _glow_loops() -> Dialect:
    from glow_mlir.dialects.glow_loops import GlowLoops

    return GlowLoops


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "glow": _glow, "glow_ir": _glow_ir, "glow_accel": _glow_accel, "glow_loops": _glow_loops}
