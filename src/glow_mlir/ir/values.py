"""Detached SSA values: operands for an op built outside any IR, so that its verifier or a
reference kernel can run on it (an instruction's shadow graph op, a tile op's instruction).

xDSL has no public constructor of a free value (`SSAValue` is abstract, and
`xdsl.utils.test_value.create_ssa_value` is a test helper that makes a `test.op`); the
arguments of a fresh block are public API and belong to no operation.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Attribute, Block, BlockArgument


def detached_values(types: Iterable[Attribute]) -> tuple[BlockArgument, ...]:
    """One value per type, the arguments of a block of their own."""
    return Block(arg_types=types).args
