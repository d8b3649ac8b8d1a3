"""The scratchpad placement rule shared by accel-double-buffer and accel-plan-scratchpad
(transforms/accel/placement.py): residents stack down from the top, streaming tiles up
from the bottom, so a freed streaming tile's bytes stay one hole."""

from __future__ import annotations

from glow_mlir.transforms.accel.placement import Placement


def test_residents_from_the_top_streaming_from_the_bottom():
    p = Placement(top=1024)
    assert p.place("w0", 256, resident=False) == 256
    assert p.place("acc", 128, resident=True) == 1024
    assert p.live == {"w0": (0, 256), "acc": (896, 128)}


def test_a_resident_never_splits_the_hole_a_streaming_tile_left():
    """The FileCheck case of accel-double-buffer (@resident): a relu's result %r and an
    accumulator %c live across steps. With first fit %r would sit right above %t and %c
    in the hole %t left: the 128 bytes free when %b1 comes are two 64-byte holes. From
    the top, they leave the holes whole and %b1 fits."""
    p = Placement(top=704)
    p.place("t", 128, resident=False)
    p.place("r", 128, resident=True)
    p.place("a0", 128, resident=False)
    p.place("b0", 128, resident=False)
    p.free("t")
    p.place("c", 64, resident=True)
    assert p.place("a1", 128, resident=False) == 128  # the bytes %t left
    assert p.place("b1", 128, resident=False) <= 704
    assert p.live["r"] == (576, 128) and p.live["c"] == (512, 64)


def test_a_resident_takes_the_highest_hole_that_holds_it():
    p = Placement(top=1024)
    p.place("r0", 256, resident=True)  # [768, 1024)
    p.place("r1", 128, resident=True)  # [640, 768)
    p.free("r0")
    p.place("r2", 512, resident=True)  # the hole above r1 is too small: below it
    assert p.live["r2"] == (128, 512)
    p.place("r3", 256, resident=True)  # the freed top holds it
    assert p.live["r3"] == (768, 256)


def test_a_tile_that_fits_nowhere_goes_past_the_top():
    p = Placement(top=512)
    p.place("a", 256, resident=False)
    p.place("b", 192, resident=True)  # [320, 512): 64 bytes left, at [256, 320)
    assert p.place("c", 128, resident=True) > 512  # the caller sees the overflow
    p.free("c")
    assert p.place("d", 64, resident=False) == 320  # the 64 bytes hold this one
    assert p.place("e", 64, resident=False) > 512
