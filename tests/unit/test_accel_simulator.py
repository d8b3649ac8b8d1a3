"""The accelerator simulator (targets/accel): numbers of hand-written programs against
numpy, every rule it checks (one program breaking each, the message naming the op and
what), the cycle model against timelines worked out by hand, and the report."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from accel_programs import (
    A_MAIN,
    C_MAIN,
    CONV_ACCUMULATE,
    CONV_WEIGHTS,
    MATMUL_ASYNC,
    MATMUL_ASYNC_PEAK,
    MATMUL_BLOCKING,
    MATMUL_BLOCKING_PEAK,
    MM_TYPES,
    T_A,
    T_B,
    T_C,
    VEC_WEIGHTS,
    VECTOR_OPS,
    accel_program,
    compute_cycles,
    conv_reference,
    dma_cycles,
    line_of,
    load,
    matmul_module,
    parse_accel,
    store,
)
from glow_mlir.targets.accel import AccelReport, AccelSimulationError, AccelSimulator, simulate
from glow_mlir.targets.accel.hazards import MainRegion
from glow_mlir.targets.interpreter import EvaluationError
from glow_mlir.tools.errors import report as tool_report

RNG = np.random.default_rng(7)


def _a() -> np.ndarray:
    return RNG.standard_normal((4, 8)).astype(np.float32)


# ---------------------------------------------------------------------------- numbers

@pytest.mark.parametrize("body", [MATMUL_BLOCKING, MATMUL_ASYNC], ids=["blocking", "async"])
def test_tiled_matmul_with_accumulate(body):
    module, _, b = matmul_module(body)
    sim = AccelSimulator(module)
    a = _a()
    (c,) = sim.run([a])
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    # a second run on other inputs: nothing stale from the first one
    a2 = _a()
    np.testing.assert_allclose(sim.run({"a": a2})[0], a2.astype(np.float64) @ b, rtol=1e-5,
                               atol=1e-5)


def test_conv_without_bias_accumulates_before_the_fused_relu():
    """relu(chunk0 + chunk1), not chunk0 + relu(chunk1): random data tells them apart."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    module = parse_accel(accel_program(CONV_WEIGHTS, CONV_ACCUMULATE), {"w": w})
    (y,) = AccelSimulator(module).run([x])
    full = conv_reference(x, w)
    np.testing.assert_allclose(y, np.maximum(full, 0), rtol=1e-5, atol=1e-5)
    first = conv_reference(x[:, :2], w[:, :2])
    wrong = first + np.maximum(full - first, 0)
    assert not np.allclose(y, wrong, atol=1e-3)


def test_elementwise_copy_and_pool():
    rng = np.random.default_rng(2)
    p, q = (rng.standard_normal((2, 8)).astype(np.float32) for _ in range(2))
    module = parse_accel(accel_program(VEC_WEIGHTS, VECTOR_OPS))
    s, m = AccelSimulator(module).run([p, q])
    np.testing.assert_array_equal(s, np.maximum(p + q, 0))
    np.testing.assert_array_equal(m.reshape(4), p.reshape(2, 4, 2).max(axis=(0, 2)))


def test_example_with_blocking_loads_and_relu_matches_numpy():
    """The shape of program convert-glow-ir-to-accel emits (the dialect's example)."""
    module, _, b = matmul_module(MATMUL_BLOCKING.replace(
        "%k4 = glow_accel.dma_start",
        f'glow_accel.elementwise @out %tc, @in %tc {{kind = "relu"}} : {T_C}\n'
        "%k4 = glow_accel.dma_start"))
    a = _a()
    outputs, rep = simulate(module, [a])
    np.testing.assert_allclose(outputs[0], np.maximum(a.astype(np.float64) @ b, 0),
                               rtol=1e-5, atol=1e-5)
    assert rep.compute_cycles == 2 * compute_cycles(4 * 6 * 4, 256) + compute_cycles(24, 16)


# ---------------------------------------------------------------------------- cycles

def test_blocking_transfers_do_not_overlap_and_cycles_add_up():
    module, _, _ = matmul_module(MATMUL_BLOCKING)
    rep = AccelSimulator(module).report  # static: known before any run
    transfers = [64, 96, 64, 96, 96]  # a chunk, b chunk, a chunk, b chunk, c
    matmul = compute_cycles(4 * 6 * 4, 256)
    assert rep.overlap_cycles == 0
    assert rep.dma_cycles == sum(dma_cycles(n) for n in transfers)
    assert rep.compute_cycles == 2 * matmul
    assert rep.cycles == sum(1 + dma_cycles(n) for n in transfers) + 2 * matmul
    assert (rep.dma_bytes_in, rep.dma_bytes_out, rep.dma_bytes) == (320, 96, 416)
    assert rep.scratchpad_peak_bytes == MATMUL_BLOCKING_PEAK
    assert rep.scratchpad_bytes == 4096


def test_prefetched_chunk_overlaps_the_first_matmul():
    module, _, _ = matmul_module(MATMUL_ASYNC)
    rep = AccelSimulator(module).report
    matmul = compute_cycles(4 * 6 * 4, 256)
    # The issuer spends 1 cycle per dma_start; the engine runs the transfers in order.
    k0 = 1 + dma_cycles(64)              # issued at 1, engine idle
    k1 = k0 + dma_cycles(96)             # queued behind k0
    k2 = k1 + dma_cycles(64)
    k3 = k2 + dma_cycles(96)
    mm0 = (k1, k1 + matmul)              # waits for k0, k1
    mm1 = (k3, k3 + matmul)              # waits for k2, k3
    k4_start = mm1[1] + 1
    end = k4_start + dma_cycles(96)
    assert rep.cycles == end
    # mm0 runs entirely while k2 transfers ([k1, k2) covers it); mm1 under nothing
    assert mm0[1] <= k2
    assert rep.overlap_cycles == matmul
    assert rep.dma_cycles == sum(dma_cycles(n) for n in (64, 96, 64, 96, 96))
    assert rep.compute_cycles == 2 * matmul
    blocking = AccelSimulator(matmul_module(MATMUL_BLOCKING)[0]).report
    assert rep.cycles < blocking.cycles
    assert rep.dma_hidden_share == pytest.approx(matmul / rep.dma_cycles)
    assert rep.scratchpad_peak_bytes == MATMUL_ASYNC_PEAK


def test_conv_and_vector_op_costs():
    w = np.zeros((2, 4, 3, 3), np.float32)
    conv = AccelSimulator(parse_accel(accel_program(CONV_WEIGHTS, CONV_ACCUMULATE),
                                      {"w": w})).report
    assert conv.compute_cycles == 2 * compute_cycles(50 * 2 * 3 * 3, 256)  # MACs
    vec = AccelSimulator(parse_accel(accel_program(VEC_WEIGHTS, VECTOR_OPS))).report
    # add, relu, copy: 16 elements each; max_pool: 4 outputs x a 2x2 window
    assert vec.compute_cycles == 3 * compute_cycles(16, 16) + compute_cycles(4 * 4, 16)


def test_other_targets_change_the_cycles():
    slow, _, _ = matmul_module(MATMUL_BLOCKING, target={"dma_bytes_per_cycle": 4,
                                                        "dma_latency": 0})
    rep = AccelSimulator(slow).report
    assert rep.dma_cycles == (64 + 96 + 64 + 96 + 96) // 4


def test_report_fields_as_json():
    module, _, _ = matmul_module(MATMUL_ASYNC, attrs="glow_accel.dma_lower_bound = 208 : i64")
    rep = AccelSimulator(module).report
    data = json.loads(json.dumps(rep.as_dict()))
    for key in ("dma_bytes", "dma_bytes_in", "dma_bytes_out", "dma_lower_bound_bytes",
                "cycles", "compute_cycles", "dma_cycles", "overlap_cycles",
                "scratchpad_bytes", "scratchpad_peak_bytes", "dma_hidden_share"):
        assert key in data
    assert data["dma_lower_bound_bytes"] == 208
    assert data["dma_ratio"] == pytest.approx(416 / 208)
    assert data["cycles"] == rep.cycles
    assert AccelReport().dma_hidden_share == 1.0 and AccelReport().dma_ratio is None


# ---------------------------------------------------------------------------- rules

def _error(body: str, *, verify: bool = True, **kwargs) -> tuple[str, str]:
    """(message, program text) of the AccelSimulationError building the simulator gives."""
    module, text, _ = matmul_module(body, verify=verify, **kwargs)
    with pytest.raises(AccelSimulationError) as info:
        AccelSimulator(module)
    return str(info.value), text


def _at(text: str, needle: str, op: str) -> str:
    """The start of a message about the op on the line containing `needle`."""
    return rf"^prog\.mlir:{line_of(text, needle)}:\d+: error: '{re.escape(op)}' op "


def _loc(text: str, needle: str) -> str:
    return rf"prog\.mlir:{line_of(text, needle)}:\d+"


def test_compute_reading_a_tile_whose_load_is_not_waited_for():
    body = MATMUL_ASYNC.replace("glow_accel.dma_wait %k2, %k3\n", "").replace(
        "glow_accel.dma_wait %k4", "glow_accel.dma_wait %k4, %k2, %k3")
    msg, text = _error(body)
    assert re.match(_at(text, "{accumulate}", "glow_accel.matmul")
                    + rf"reads tile %ta1 while the load %k2 \({_loc(text, '%k2 =')}\) is "
                    r"not waited for$", msg), msg


def test_compute_writing_a_tile_a_store_still_reads():
    mm = f"glow_accel.matmul @out %tc, @in %ta, @in %tb : {MM_TYPES}  // late"
    msg, text = _error(MATMUL_BLOCKING.replace("glow_accel.dma_wait %k4",
                                               mm + "\nglow_accel.dma_wait %k4"))
    assert re.match(_at(text, "// late", "glow_accel.matmul")
                    + r"writes tile %tc while the store %k4 \(.*\) still reads it$", msg), msg


def test_compute_writing_a_tile_a_load_still_writes():
    early = load("%kx", "%c", "0, 0", "%tc", "4, 6", C_MAIN, T_C)
    body = MATMUL_BLOCKING.replace("glow_accel.matmul @out", early + "\nglow_accel.matmul @out")
    body = body.replace("glow_accel.dma_wait %k4", "glow_accel.dma_wait %k4, %kx")
    msg, text = _error(body)
    assert re.match(_at(text, "glow_accel.matmul @out", "glow_accel.matmul")
                    + r"writes tile %tc while the load %kx \(.*\) still writes it$", msg), msg


@pytest.mark.parametrize("transfer,pending,message", [
    (load("%kz", "%a", "0, 4", "%ta", "4, 4", A_MAIN, T_A), "%k0",
     r"writes tile %ta\[0:4, 0:4\] while the load %k0 \(.*\) still writes those bytes$"),
    # the load also reads main memory the store writes; the tile clash is found first
    (load("%kz", "%c", "0, 0", "%tc", "4, 6", C_MAIN, T_C), "%k4",
     r"writes tile %tc\[0:4, 0:6\] while the store %k4 \(.*\) still reads those bytes$"),
    (store("%kz", "%ta", "%c", "0, 0", "4, 4", T_A, C_MAIN), "%k0",
     r"reads tile %ta\[0:4, 0:4\] while the load %k0 \(.*\) still writes those bytes$"),
    (load("%kz", "%c", "0, 2", "%ta", "4, 4", C_MAIN, T_A), "%k4",
     r"reads %c\[0:4, 2:6\] while the store %k4 \(.*\) still writes those bytes$"),
], ids=["load_over_a_pending_load", "load_over_a_pending_store", "store_of_a_pending_load",
        "load_of_main_memory_a_pending_store_writes"])
def test_transfer_over_bytes_a_pending_transfer_uses(transfer, pending, message):
    """A transfer started (before the wait of `pending`) on bytes the pending transfer
    still moves: an error on the new dma_start naming both."""
    body = MATMUL_BLOCKING.replace(f"glow_accel.dma_wait {pending}",
                                   f"{transfer}\nglow_accel.dma_wait {pending}, %kz")
    msg, text = _error(body)
    assert re.match(_at(text, "%kz =", "glow_accel.dma_start") + message, msg), msg


def test_stores_to_disjoint_column_blocks_may_be_in_flight_together():
    """Their byte ranges interleave, their elements do not."""
    two = (store("%k4", "%tc", "%c", "0, 0", "4, 3", T_C, C_MAIN) + "\n"
           + store("%k5", "%tc", "%c", "0, 3", "4, 3", T_C, C_MAIN).replace("%tc[0, 0]",
                                                                            "%tc[0, 3]"))
    body = MATMUL_BLOCKING.replace(
        store("%k4", "%tc", "%c", "0, 0", "4, 6", T_C, C_MAIN), two).replace(
        "glow_accel.dma_wait %k4", "glow_accel.dma_wait %k4, %k5")
    module, _, b = matmul_module(body)
    a = _a()
    np.testing.assert_allclose(AccelSimulator(module).run([a])[0], a.astype(np.float64) @ b,
                               rtol=1e-5, atol=1e-5)
    overlapping = body.replace('-> %c[0, 3] sizes [4, 3]', '-> %c[0, 2] sizes [4, 3]')
    msg, _ = _error(overlapping)
    assert "writes %c[0:4, 2:5] while the store %k4" in msg


def test_main_regions_of_different_views_compare_elements():
    mem = object()
    cols = MainRegion(mem, 0, (4, 6), 4, ((0, 4), (0, 3)))
    flat_miss = MainRegion(mem, 0, (24,), 4, ((3, 6),))   # row 0, columns 3..5
    flat_hit = MainRegion(mem, 0, (24,), 4, ((10, 13),))  # row 1 columns 4, 5; row 2 column 0
    shifted = MainRegion(mem, 8, (24,), 4, ((1, 2),))      # element 3 (row 0, column 3)
    assert not cols.overlaps(flat_miss) and not cols.overlaps(shifted)
    assert cols.overlaps(flat_hit)
    assert not cols.overlaps(MainRegion(object(), 0, (4, 6), 4, ((0, 4), (0, 3))))
    # a whole buffer (an alloc's poisoning) is one byte interval
    row1 = MainRegion(mem, 24, (6,), 4, ((0, 6),))        # all of row 1, as its own view
    row0_tail = MainRegion(mem, 12, (3,), 4, ((0, 3),))   # row 0, columns 3..5
    assert cols.overlaps(row1) and not cols.overlaps(row0_tail)
    assert row1.overlaps(MainRegion(mem, 44, (2,), 4, ((0, 2),)))  # shares byte 44
    assert not row1.overlaps(MainRegion(mem, 48, (2,), 4, ((0, 2),)))


def test_alloc_over_a_live_tile():
    msg, text = _error(MATMUL_BLOCKING.replace("{offset = 64 : i64}", "{offset = 0 : i64}"))
    assert re.match(_at(text, "%tb = glow_accel.scratchpad_alloc",
                        "glow_accel.scratchpad_alloc")
                    + r"puts tile %tb on scratchpad bytes \[0, 96\), over live tile %ta at "
                    rf"bytes \[0, 64\) \(allocated at {_loc(text, '%ta =')}\)$", msg), msg


def test_reusing_the_bytes_of_a_freed_tile_is_fine():
    body = MATMUL_BLOCKING.replace(
        "glow_accel.scratchpad_free %tc : memref<4x6xf32, 1>",
        "glow_accel.scratchpad_free %tc : memref<4x6xf32, 1>\n"
        "%again = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x6xf32, 1>\n"
        "glow_accel.scratchpad_free %again : memref<4x6xf32, 1>")
    AccelSimulator(matmul_module(body)[0])


def test_free_with_a_transfer_in_flight():
    body = MATMUL_BLOCKING.replace("glow_accel.dma_wait %k4\n", "")
    body = body.replace("glow_accel.scratchpad_free %tc : memref<4x6xf32, 1>",
                        "glow_accel.scratchpad_free %tc : memref<4x6xf32, 1>\n"
                        "glow_accel.dma_wait %k4")
    msg, text = _error(body)
    assert re.match(_at(text, "scratchpad_free %tc", "glow_accel.scratchpad_free")
                    + rf"frees tile %tc while the store %k4 \({_loc(text, '%k4 =')}\) is not "
                    r"waited for$", msg), msg


def test_waiting_twice_for_a_token():
    msg, text = _error(MATMUL_BLOCKING + "glow_accel.dma_wait %k1  // twice\n")
    assert re.match(_at(text, "// twice", "glow_accel.dma_wait")
                    + rf"waits for %k1 again \(already waited for at "
                    rf"{_loc(text, 'dma_wait %k1')}\)$", msg), msg


def test_program_ending_with_a_transfer_in_flight():
    body = MATMUL_BLOCKING.replace("glow_accel.dma_wait %k4\n", "").replace(
        "glow_accel.scratchpad_free %tc : memref<4x6xf32, 1>\n", "")
    msg, text = _error(body)
    assert re.match(_at(text, "%k4 =", "glow_accel.dma_start")
                    + r"starts %k4, which is never waited for", msg), msg


def test_tile_past_the_end_of_the_scratchpad():
    body = MATMUL_BLOCKING.replace("{offset = 192 : i64}", "{offset = 4032 : i64}")
    msg, text = _error(body, verify=False)  # the verifier rejects it too
    assert re.match(_at(text, "%tc = glow_accel", "glow_accel.scratchpad_alloc")
                    + r"puts tile %tc \(96 bytes at offset 4032\) 32 bytes past the end of "
                    r"the 4096-byte scratchpad$", msg), msg


def test_unplanned_tile():
    msg, text = _error(MATMUL_BLOCKING.replace("{offset = 64 : i64} ", ""))
    assert re.match(_at(text, "%tb = glow_accel", "glow_accel.scratchpad_alloc")
                    + r"has no offset: the scratchpad is not planned; run "
                    r"accel-plan-scratchpad$", msg), msg


def test_dma_box_outside_its_buffer():
    body = MATMUL_BLOCKING.replace("%b[4, 0] -> %tb", "%b[6, 0] -> %tb")
    msg, text = _error(body, verify=False)
    assert re.match(_at(text, "%k3 =", "glow_accel.dma_start")
                    + r"box \[6, 0\] \+ \[4, 6\] is outside the source %b of shape \[8, 6\]$",
                    msg), msg


def test_tile_freed_twice():
    body = MATMUL_BLOCKING.replace(f"glow_accel.scratchpad_free %ta : {T_A}",
                                   f"glow_accel.scratchpad_free %ta : {T_A}\n"
                                   f"glow_accel.scratchpad_free %ta : {T_A}  // again")
    msg, text = _error(body)
    assert re.match(_at(text, "// again", "glow_accel.scratchpad_free")
                    + rf"frees tile %ta again \(freed at {_loc(text, '%ta : ' + T_A)}\)$",
                    msg), msg


def test_compute_on_main_memory():
    body = MATMUL_BLOCKING.replace(
        f"glow_accel.matmul @out %tc, @in %ta, @in %tb : {MM_TYPES}",
        f"glow_accel.matmul @out %tc, @in %a, @in %tb : {T_C}, {A_MAIN}, {T_B}  // main", 1)
    msg, text = _error(body, verify=False)  # the verifier rejects it too
    assert re.match(_at(text, "// main", "glow_accel.matmul")
                    + r"uses %a, which is not a tile$", msg), msg


def test_compute_reading_a_tile_never_loaded():
    body = MATMUL_BLOCKING.replace(
        load("%k1", "%b", "0, 0", "%tb", "4, 6", "memref<8x6xf32>", "memref<4x6xf32, 1>")
        + "\nglow_accel.dma_wait %k1\n", "")
    msg, text = _error(body)
    assert re.match(_at(text, "glow_accel.matmul @out", "glow_accel.matmul")
                    + r"reads uninitialized tile %tb$", msg), msg


def test_compute_reading_a_half_loaded_tile():
    body = MATMUL_BLOCKING.replace("%b[0, 0] -> %tb[0, 0] sizes [4, 6]",
                                   "%b[0, 0] -> %tb[0, 0] sizes [2, 6]")
    msg, _ = _error(body)
    assert msg.endswith("reads uninitialized tile %tb (element [2, 0] was never written)")


def test_store_of_a_tile_never_written():
    fresh = ("%tn = glow_accel.scratchpad_alloc {offset = 512 : i64} : memref<4x6xf32, 1>\n"
             + store("%kn", "%tn", "%c", "0, 0", "4, 6", T_C, C_MAIN)
             + "\nglow_accel.dma_wait %kn\n")
    msg, text = _error(fresh + MATMUL_BLOCKING)
    assert re.match(_at(text, "%kn =", "glow_accel.dma_start")
                    + r"reads uninitialized tile %tn\[0:4, 0:6\]$", msg), msg


def test_use_of_a_freed_tile():
    late = f"glow_accel.matmul @out %tc, @in %ta, @in %tb : {MM_TYPES}  // late\n"
    msg, text = _error(MATMUL_BLOCKING + late)
    assert re.match(_at(text, "// late", "glow_accel.matmul")
                    + rf"uses tile %tc after its scratchpad_free "
                    rf"\({_loc(text, 'scratchpad_free %tc')}\)$", msg), msg


def test_instruction_left_in_an_accelerator_program():
    body = "glow_ir.relu @out %c, @in %c : memref<4x6xf32>\n" + MATMUL_BLOCKING
    msg, text = _error(body)
    assert re.match(_at(text, "glow_ir.relu", "glow_ir.relu")
                    + r"is an instruction not converted to the accelerator", msg), msg


def test_dealloc_of_main_memory_a_store_still_writes():
    body = MATMUL_BLOCKING.replace(
        "glow_accel.dma_wait %k4",
        "glow_accel.dma_wait %k4\n"
        "%act = glow_ir.alloc_activation : memref<4x6xf32>\n"
        + store("%k5", "%tc", "%act", "0, 0", "4, 6", T_C, C_MAIN) + "\n"
        "glow_ir.dealloc_activation %act : memref<4x6xf32>\n"
        "glow_accel.dma_wait %k5")
    msg, text = _error(body)
    assert re.match(_at(text, "dealloc_activation", "glow_ir.dealloc_activation")
                    + r"frees %act while the store %k5 \(.*\) still writes its bytes$",
                    msg), msg


def test_program_without_a_target():
    msg, _ = _error(MATMUL_BLOCKING, with_target=False)
    assert msg == ("@main has no glow_accel.target (on the function or its module): it is "
                   "not an accelerator program")


def test_errors_are_user_errors_the_tools_print_cleanly():
    module, _, _ = matmul_module(MATMUL_BLOCKING.replace("{offset = 64 : i64} ", ""))
    with pytest.raises(EvaluationError) as info:  # also what the interpreters raise
        AccelSimulator(module)
    text = tool_report("glow-run", info.value)
    assert text.startswith("prog.mlir:") and "internal error" not in text


def test_wrong_inputs_are_simulation_errors():
    module, _, _ = matmul_module()
    with pytest.raises(AccelSimulationError, match=r"takes 1 inputs, got 2"):
        AccelSimulator(module).run([_a(), _a()])
