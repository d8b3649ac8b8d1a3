"""xDSL plugin entry point (group `xdsl.universe`): `xdsl-opt` sees our dialects and passes.

The top of the layers (docs/architecture.md §2): the dialects come from
`glow_mlir.dialects.registry.DIALECTS`, the passes from each layer's table
(`glow_mlir.transforms.passes`, `glow_mlir.conversion.passes`), all imported lazily, so
tools start fast. Nothing in the package imports this module.
"""

from __future__ import annotations

from xdsl.universe import Universe

from glow_mlir.conversion.passes import GLOW_PASSES
from glow_mlir.dialects.registry import DIALECTS
from glow_mlir.transforms.passes import PassFactory


def _with_backends(factory: PassFactory) -> PassFactory:
    """The pass class, once the graph passes can find backends by name (importing
    `glow_mlir.backends` installs the lookup, `transforms/graph/backend_hooks.py`)."""
    def load():
        import glow_mlir.backends  # noqa: F401

        return factory()

    return load


PASSES = {name: _with_backends(factory) for name, factory in GLOW_PASSES.items()}

GLOW_UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
