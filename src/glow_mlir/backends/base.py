"""The three hooks a backend gives the graph compiler, as in Glow's Backend class: the
default implementation of `transforms.graph.backend_hooks.GraphBackend`."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation


class Backend:
    """Default: lower everything `lower-graph` knows, support every op, change nothing."""

    name = "generic"

    def should_lower(self, op: Operation) -> bool:
        """Should `lower-graph` replace `op` by simpler ops? (Glow: shouldLower)"""
        return True

    def is_op_supported(self, op: Operation) -> bool:
        """Can this backend run `op` as it is? (Glow: isOpSupported)"""
        return True

    def supports_fused_activation(self, op: Operation, activation: str) -> bool:
        """May `fuse-activations` fold `activation` into `op`?"""
        return False

    def transform_post_lowering(self, module: ModuleOp) -> bool:
        """Backend-specific rewrites after lowering; True when the module changed.
        (Glow: transformPostLowering)"""
        return False
