"""Helpers of the accelerator pass tests: a small numpy runner of `glow_accel` programs
that checks the schedule, and random blocking programs as `convert-glow-ir-to-accel`
emits them.

The runner does not trust the passes' own dependence model. A DMA is carried out at its
`dma_wait` (not at its start), so a schedule that reads a tile before its load was waited
for, or lets a transfer race with an op on the same bytes, gives different numbers or is
reported: a compute op or free touching a tile with a transfer in flight, a transfer
starting on a tile or on main-memory elements another one in flight writes (or reads,
for a write), a tile read before anything was written to it (tiles start as NaN), a
transfer never waited for. With `planned=True`, tiles live at their `offset` in one
shared scratchpad array, so two live tiles sharing bytes corrupt the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from accel_testing import live_tile_peak
from glow_mlir.analysis.instr_buffers import root_element_offset
from glow_mlir.dialects import glow_accel as acc
from glow_mlir.dialects import glow_ir
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module, verify_module


class ScheduleError(AssertionError):
    """The program breaks a rule of the accelerator."""


def parse(text: str) -> ModuleOp:
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def func_of(module: ModuleOp) -> glow_ir.FuncOp:
    return next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))


# ====================================================================== the runner


@dataclass
class _Transfer:
    dma: acc.DmaStartOp
    main_root: SSAValue
    main_elems: frozenset[int]  # root element indices of the main-memory box
    tile_elems: frozenset[int]  # element indices of the tile box


@dataclass
class Runner:
    func: glow_ir.FuncOp
    planned: bool = False
    main: dict[SSAValue, np.ndarray] = field(default_factory=dict)  # root -> flat array
    tiles: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    pending: dict[SSAValue, _Transfer] = field(default_factory=dict)  # token -> transfer

    def main_view(self, value: SSAValue) -> np.ndarray:
        root = glow_ir.root_buffer(value)
        off = root_element_offset(value)
        shape = tuple(value.type.get_shape())
        n = int(np.prod(shape))
        return self.main[root][off:off + n].reshape(shape)

    def box_elems(self, value: SSAValue, offsets, sizes) -> frozenset[int]:
        shape = tuple(value.type.get_shape())
        idx = np.arange(int(np.prod(shape))).reshape(shape)
        box = idx[tuple(slice(o, o + n) for o, n in zip(offsets, sizes))]
        return frozenset((box + root_element_offset(value)).ravel().tolist())

    def fail(self, op: Operation, what: str) -> None:
        index = list(self.func.body.ops).index(op)
        raise ScheduleError(f"#{index} {op.name}: {what}")

    def busy(self, tile: SSAValue, loads_only: bool = False) -> bool:
        return any(t.dma.tile is tile and (t.dma.is_load or not loads_only)
                   for t in self.pending.values())

    # ------------------------------------------------------------------ ops
    def run(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        scratch = None
        if self.planned:
            target = acc.target_of(self.func)
            assert target is not None
            scratch = np.zeros(target.value("scratchpad_bytes"), np.uint8)
        for w, arg in self.func.weight_values():
            self.main[arg] = np.array(inputs[w.sym_name.data], np.float32).ravel().copy()
        for op in self.func.body.ops:
            if isinstance(op, acc.ScratchpadAllocOp):
                shape = tuple(op.result.type.get_shape())
                if scratch is not None:
                    off = op.offset_value
                    if off is None:
                        self.fail(op, "tile has no offset in a planned program")
                    tile = scratch[off:off + op.size_bytes].view(np.float32).reshape(shape)
                    tile[...] = np.nan
                else:
                    tile = np.full(shape, np.nan, np.float32)
                self.tiles[op.result] = tile
            elif isinstance(op, acc.ScratchpadFreeOp):
                if self.busy(op.tile):
                    self.fail(op, "frees a tile with a transfer in flight")
                del self.tiles[op.tile]
            elif isinstance(op, acc.DmaStartOp):
                self.start(op)
            elif isinstance(op, acc.DmaWaitOp):
                for tok in op.tokens:
                    if tok not in self.pending:
                        self.fail(op, "waits for a transfer that is not in flight")
                    self.finish(self.pending.pop(tok).dma)
            elif isinstance(op, acc.TileOp):
                self.compute(op)
            elif isinstance(op, glow_ir.AllocActivationOp):
                self.main[op.result] = np.full(
                    int(np.prod(op.result.type.get_shape())), np.nan, np.float32)
            elif isinstance(op, glow_ir.DeallocActivationOp):
                if any(t.main_root is op.buffer for t in self.pending.values()):
                    self.fail(op, "deallocates a buffer with a transfer in flight")
            elif not isinstance(op, glow_ir.TensorViewOp):
                self.fail(op, "unexpected op")
        if self.pending:
            raise ScheduleError(f"{len(self.pending)} transfer(s) never waited for")
        return {w.sym_name.data: self.main[arg].reshape(tuple(arg.type.get_shape())).copy()
                for w, arg in self.func.weight_values()}

    def start(self, op: acc.DmaStartOp) -> None:
        (main_offs, sizes), (tile_offs, _) = ((op.src_box, op.dst_box) if op.is_load
                                              else (op.dst_box, op.src_box))
        elems = self.box_elems(op.main, main_offs, sizes)
        tile_elems = self.box_elems(op.tile, tile_offs, sizes)
        root = glow_ir.root_buffer(op.main)
        if op.tile not in self.tiles:
            self.fail(op, "tile is not allocated")
        for t in self.pending.values():
            same_tile = t.dma.tile is op.tile and t.tile_elems & tile_elems
            if same_tile and (op.is_load or t.dma.is_load):
                self.fail(op, "transfer on tile elements another transfer in flight uses")
            same_main = t.main_root is root and t.main_elems & elems
            if same_main and (not op.is_load or not t.dma.is_load):
                self.fail(op, "transfer on main-memory elements another one in flight uses")
        self.pending[op.token] = _Transfer(op, root, elems, tile_elems)

    def finish(self, op: acc.DmaStartOp) -> None:
        (so, sizes), (do, _) = op.src_box, op.dst_box
        src = self.tiles[op.src] if not op.is_load else self.main_view(op.src)
        dst = self.tiles[op.dst] if op.is_load else self.main_view(op.dst)
        dst[tuple(slice(o, o + n) for o, n in zip(do, sizes))] = \
            src[tuple(slice(o, o + n) for o, n in zip(so, sizes))]

    def compute(self, op: acc.TileOp) -> None:
        for v in op.operands:
            if v not in self.tiles:
                self.fail(op, "uses a tile that is not allocated")
        dest, *srcs = op.operands
        if self.busy(dest) or any(self.busy(s, loads_only=True) for s in srcs):
            self.fail(op, "uses a tile with a transfer in flight")
        args = [self.tiles[s] for s in srcs]
        if op.accumulates:
            args.append(self.tiles[dest])
        if any(np.isnan(a).any() for a in args):
            self.fail(op, "reads a tile nothing was written to")
        kind = op.kind
        if kind == "mat_mul":
            out = args[0] @ args[1]
        elif kind == "element_add":
            out = args[0] + args[1]
        elif kind == "element_mul":
            out = args[0] * args[1]
        elif kind == "relu":
            out = np.maximum(args[0], 0)
        elif kind == "copy":
            out = args[0].copy()
        else:
            raise NotImplementedError(kind)
        if op.accumulates:
            out = out + self.tiles[dest]
        self.tiles[dest][...] = out


def run(module: ModuleOp, inputs: dict[str, np.ndarray], planned: bool = False
        ) -> dict[str, np.ndarray]:
    return Runner(func_of(module), planned).run(inputs)


# ====================================================================== random programs

N = 8  # every main-memory buffer is N x N f32


@dataclass
class _Writer:
    lines: list[str] = field(default_factory=list)
    count: int = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"%{prefix}{self.count}"

    def alloc(self, shape: tuple[int, int]) -> str:
        t = self.name("t")
        self.lines.append(f"{t} = glow_accel.scratchpad_alloc : {_tile(shape)}")
        return t

    def free(self, t: str, shape) -> None:
        self.lines.append(f"glow_accel.scratchpad_free {t} : {_tile(shape)}")

    def load(self, buf: str, buf_shape, at, t: str, shape, halves: bool = False) -> None:
        """A blocking load of the whole tile (`halves`: as two loads of half its rows)."""
        rows = shape[0] // 2 if halves else shape[0]
        for r in range(0, shape[0], rows):
            k = self.name("k")
            self.lines.append(
                f"{k} = glow_accel.dma_start {buf}[{at[0] + r}, {at[1]}] -> {t}[{r}, 0] "
                f"sizes [{rows}, {shape[1]}] : {_main(buf_shape)} -> {_tile(shape)}")
            self.lines.append(f"glow_accel.dma_wait {k}")

    def store(self, t: str, shape, buf: str, buf_shape, at) -> None:
        k = self.name("k")
        self.lines.append(
            f"{k} = glow_accel.dma_start {t}[0, 0] -> {buf}[{at[0]}, {at[1]}] sizes "
            f"[{shape[0]}, {shape[1]}] : {_tile(shape)} -> {_main(buf_shape)}")
        self.lines.append(f"glow_accel.dma_wait {k}")


def _tile(shape) -> str:
    return f"memref<{shape[0]}x{shape[1]}xf32, 1>"


def _main(shape) -> str:
    return f"memref<{shape[0]}x{shape[1]}xf32>"


# Main buffers: weights %w0.. (N x N) and %v, a 4N x N/4 view... of %w0's bytes as
# (2N) x (N/2): loads and stores through it alias %w0.
VIEW_SHAPE = (2 * N, N // 2)


@st.composite
def blocking_programs(draw, max_steps: int = 6, inputs_only: bool = False):
    """(text, inputs, scratchpad bytes) of a random blocking program over weights
    w0..w3. Element-wise steps (1 or 2 sources) and matmul steps accumulating over
    k-chunks; a step may re-read the box of an earlier step (a reload). With
    `inputs_only`, steps read w0/w1 and write w2/w3 (no dependence between steps)."""
    w = _Writer()
    nbuf = 4
    bufs = [(f"%w{i}", (N, N)) for i in range(nbuf)]
    use_view = not inputs_only and draw(st.booleans())
    if use_view:
        w.lines.append(f"%v = glow_ir.tensor_view %w0[0, 0] : {_main((N, N))} to "
                       f"{_main(VIEW_SHAPE)}")
    readable = bufs[:2] if inputs_only else bufs + ([("%v", VIEW_SHAPE)] if use_view else [])
    writable = bufs[2:] if inputs_only else readable
    sizes = st.sampled_from([2, 4])
    loaded: list[tuple[str, tuple, tuple, tuple]] = []  # earlier loads (for reloads)

    def box(buf_shape, shape):
        r = draw(st.integers(0, buf_shape[0] - shape[0]))
        c = draw(st.integers(0, buf_shape[1] - shape[1]))
        return (r, c)

    def pick_load(shape):
        same = [x for x in loaded if x[3] == shape]
        if same and draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(same))[:3]
        buf, bshape = draw(st.sampled_from(readable))
        if bshape[0] < shape[0] or bshape[1] < shape[1]:
            buf, bshape = bufs[0]
        at = box(bshape, shape)
        loaded.append((buf, bshape, at, shape))
        return buf, bshape, at

    n_steps = draw(st.integers(1, max_steps))
    for _ in range(n_steps):
        if draw(st.booleans()):  # element-wise
            shape = (draw(sizes), draw(sizes))
            kind = draw(st.sampled_from(["element_add", "element_mul", "relu", "copy"]))
            nsrc = 2 if kind in ("element_add", "element_mul") else 1
            srcs = []
            for _ in range(nsrc):
                t = w.alloc(shape)
                w.load(*pick_load(shape), t, shape, halves=draw(st.booleans()))
                srcs.append(t)
            out = w.alloc(shape)
            ty = _tile(shape)
            w.lines.append(f"glow_accel.elementwise @out {out}, "
                           + ", ".join(f"@in {s}" for s in srcs)
                           + f" {{kind = \"{kind}\"}} : " + ", ".join([ty] * (nsrc + 1)))
            for s in srcs:
                w.free(s, shape)
            dbuf, dshape = draw(st.sampled_from(writable))
            w.store(out, shape, dbuf, dshape, box(dshape, shape))
            w.free(out, shape)
        elif draw(st.booleans()):  # a weight panel kept for several output row blocks
            n = draw(sizes)
            b_buf, _ = draw(st.sampled_from(bufs[:2] if inputs_only else bufs))
            c0 = draw(st.integers(0, N - n))
            tb = w.alloc((N, n))
            w.load(b_buf, (N, N), (0, c0), tb, (N, n))
            for _ in range(draw(st.integers(1, 3))):
                m = draw(sizes)
                a_buf, _ = draw(st.sampled_from(bufs[:2] if inputs_only else bufs))
                ta = w.alloc((m, N))
                w.load(a_buf, (N, N), (draw(st.integers(0, N - m)), 0), ta, (m, N))
                tc = w.alloc((m, n))
                w.lines.append(f"glow_accel.matmul @out {tc}, @in {ta}, @in {tb} : "
                               f"{_tile((m, n))}, {_tile((m, N))}, {_tile((N, n))}")
                w.free(ta, (m, N))
                dbuf, _ = draw(st.sampled_from(bufs[2:] if inputs_only else bufs))
                w.store(tc, (m, n), dbuf, (N, N), box((N, N), (m, n)))
                w.free(tc, (m, n))
            w.free(tb, (N, n))
        else:  # matmul over k-chunks into one accumulator tile
            m, n = draw(sizes), draw(sizes)
            kc = draw(sizes)
            chunks = N // kc if draw(st.booleans()) else 1
            a_buf, _ = draw(st.sampled_from(bufs[:2] if inputs_only else bufs))
            b_buf, _ = draw(st.sampled_from(bufs[:2] if inputs_only else bufs))
            r0 = draw(st.integers(0, N - m))
            c0 = draw(st.integers(0, N - n))
            acc_t = w.alloc((m, n))
            for j in range(chunks):
                ta, tb = w.alloc((m, kc)), w.alloc((kc, n))
                w.load(a_buf, (N, N), (r0, j * kc), ta, (m, kc))
                w.load(b_buf, (N, N), (j * kc, c0), tb, (kc, n))
                w.lines.append(
                    f"glow_accel.matmul @{'inout' if j else 'out'} {acc_t}, @in {ta}, "
                    f"@in {tb}{' {accumulate}' if j else ''} : {_tile((m, n))}, "
                    f"{_tile((m, kc))}, {_tile((kc, n))}")
                w.free(ta, (m, kc))
                w.free(tb, (kc, n))
            dbuf, _ = draw(st.sampled_from(bufs[2:] if inputs_only else bufs))
            w.store(acc_t, (m, n), dbuf, (N, N), box((N, N), (m, n)))
            w.free(acc_t, (m, n))
    align = draw(st.sampled_from([16, 64, 128]))
    cap = draw(st.sampled_from([1 << 16, 0]))  # 0: as tight as the blocking program allows
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = {f"w{i}": rng.integers(-3, 4, size=(N, N)).astype(np.float32)
              for i in range(nbuf)}
    return w.lines, inputs, align, cap


def program_text(lines: list[str], align: int, cap: int) -> str:
    weights = "\n".join(f"  glow_ir.weight @w{i} mutable input : {_main((N, N))}"
                        for i in range(4))
    body = "\n".join("  " + ln for ln in lines)
    target = (f"#glow_accel.target<scratchpad_bytes = {cap}, dma_bytes_per_cycle = 32, "
              f"dma_latency = 64, macs_per_cycle = 256, vector_width = 16, "
              f"alignment = {align}>")
    return (f"glow_ir.func @main declare {{\n{weights}\n}} program(%w0, %w1, %w2, %w3) "
            f"{{\n{body}\n}} attributes {{glow_accel.target = {target}}}\n")


def blocking_peak(lines: list[str], align: int) -> int:
    """The most aligned tile bytes live at once in the blocking program."""
    return live_tile_peak(func_of(parse(program_text(lines, align, 1 << 20))), align)
