"""The xDSL Context every glow-mlir tool and API uses: our dialects plus the upstream ones
our IR mixes with (builtin, func, arith, ...), loaded lazily as xDSL does.

It lives with the dialects, the lowest layer that knows them (docs/architecture.md §2);
`universe.py` (the xDSL plugin entry) advertises the same dialects
(`glow_mlir.dialects.registry.DIALECTS`)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects

from glow_mlir.dialects.registry import DIALECTS
from glow_mlir.ir.resources import load_resource_dialect


def make_context(allow_unregistered: bool = False) -> Context:
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in get_all_dialects().items():
        if name not in DIALECTS:
            ctx.register_dialect(name, factory)
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)
    # Loaded now, not lazily: a module built in memory holds weights, and xDSL's printer
    # finds the owner of their blobs among `ctx.loaded_dialects`.
    load_resource_dialect(ctx)
    return ctx
