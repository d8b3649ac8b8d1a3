"""Loop nests of the instructions whose output length is known only at run time
(`ir/bounded_outputs.py`): non_zero, non_max_suppression. They fill a buffer sized for
the upper bound and store the length they filled in a 0-d i64 count."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import InsertPoint
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    f32,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops import storage_type as machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    elem,
    shape,
    size,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import if_else
from glow_mlir.conversion.glow_ir_to_loops.sorting import make_heap, pop_heap
from glow_mlir.dialects import glow

INDEX = IndexType()


def _flat(em: Emitter, v: SSAValue) -> SSAValue:
    base, offset = em.places[v]
    return byte_view(em, base, offset, MemRefType(machine(elem(v)), [max(size(shape(v)), 1)]))


def _nonzero(em: Emitter, v: SSAValue) -> SSAValue:
    """v != 0 (NaN counts as nonzero, as numpy's)."""
    if isinstance(v.type, IntegerType):
        return em.value(arith.CmpiOp(v, em.value(arith.ConstantOp(IntegerAttr(0, v.type))),
                                     "ne"))
    zero = em.value(arith.ConstantOp(FloatAttr(0.0, v.type)))  # type: ignore[call-overload]
    return em.value(arith.CmpfOp(v, zero, "une"))


@lowers(glow.NonZeroOp)
def non_zero(instr, em: Emitter) -> None:
    """indices = 0; then for each element in row-major order, its coordinates are stored
    in column `count` (always: a zero element's are overwritten by the next nonzero one,
    or by 0 at the end) and `count` grows by one when it is nonzero."""
    indices_v, count_v, src = instr.operands
    dims = shape(src)
    total = size(dims)
    out, cnt, x = _flat(em, indices_v), _flat(em, count_v), _flat(em, src)
    zero = em.value(arith.ConstantOp(IntegerAttr(0, i64)))
    em.loop(0, len(dims) * total, lambda e: em.store(zero, out, [e]))
    strides = [size(dims[k + 1:]) for k in range(len(dims))]

    def per_element(e, count):
        nz = _nonzero(em, em.load(x, [e]))
        for k, (d, stride) in enumerate(zip(dims, strides)):
            coord = em.value(arith.RemUIOp(em.value(arith.DivUIOp(e, em.index(stride))),
                                           em.index(d)))
            value = em.value(arith.SelectOp(nz, em.value(arith.IndexCastOp(coord, i64)), zero))
            em.store(value, out, [em.value(arith.AddiOp(em.index(k * total), count))])
        return em.value(arith.AddiOp(count, em.value(arith.SelectOp(nz, em.index(1),
                                                                      em.index(0)))))

    count = em.loop_reduce(0, total, em.index(0), per_element)
    em.store(em.value(arith.IndexCastOp(count, i64)), cnt, [em.index(0)])


class _F32:
    """float32 arithmetic in IEEE order (no fast-math flags), as the reference's."""

    def __init__(self, em: Emitter):
        self.em = em

    def c(self, v: float) -> SSAValue:
        return self.em.value(arith.ConstantOp(FloatAttr(float(v), f32)))

    def __getattr__(self, name: str):
        ops = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp,
               "div": arith.DivfOp}
        cls = ops[name]
        return lambda a, b: self.em.value(cls(a, b))

    def max(self, a, b):
        """Python's max(a, b): a unless b > a (the reference's; NaN-propagating maximumf
        differs on NaN and costs more instructions)."""
        return self.em.value(arith.SelectOp(self.gt(b, a), b, a))

    def min(self, a, b):
        """Python's min(a, b): a unless b < a."""
        return self.em.value(arith.SelectOp(self.gt(a, b), b, a))

    def gt(self, a, b):
        return self.em.value(arith.CmpfOp(a, b, "ogt"))


def _and(em: Emitter, *conds: SSAValue) -> SSAValue:
    out = conds[0]
    for c in conds[1:]:
        out = em.value(arith.AndIOp(out, c))
    return out


def _extent(f: _F32, em: Emitter, boxes: SSAValue, base: SSAValue, center: int):
    """(x_min, x_max, y_min, y_max, area) of the box at `base` (the reference's `_extent`
    and the area `iou_exceeds` computes from it)."""
    v = [em.load(boxes, [em.add_index(base, k)]) for k in range(4)]
    if center:
        half_w, half_h = f.div(v[2], f.c(2.0)), f.div(v[3], f.c(2.0))
        x0, x1 = f.sub(v[0], half_w), f.add(v[0], half_w)
        y0, y1 = f.sub(v[1], half_h), f.add(v[1], half_h)
    else:
        x0, x1, y0, y1 = f.min(v[1], v[3]), f.max(v[1], v[3]), f.min(v[0], v[2]), \
            f.max(v[0], v[2])
    return x0, x1, y0, y1, f.mul(f.sub(x1, x0), f.sub(y1, y0))


def _iou_exceeds(f: _F32, em: Emitter, a: Callable[[int], SSAValue], b, threshold):
    """onnxruntime's SuppressByIOU of boxes with extents `a(0..4)` (read when needed) and
    `b` as one i1: the rest is read and computed only when the x ranges overlap (most
    pairs of a detection model's boxes, offset per class, do not), as onnxruntime returns
    early."""
    bx0, bx1, by0, by1, area_b = b
    ix0, ix1 = f.max(a(0), bx0), f.min(a(1), bx1)

    def overlapping() -> SSAValue:
        ay0, ay1, area_a = a(2), a(3), a(4)
        iy0, iy1 = f.max(ay0, by0), f.min(ay1, by1)
        inter = f.mul(f.sub(ix1, ix0), f.sub(iy1, iy0))
        union = f.sub(f.add(area_a, area_b), inter)
        zero = f.c(0.0)
        return _and(em, f.gt(iy1, iy0), f.gt(inter, zero), f.gt(area_a, zero),
                    f.gt(area_b, zero), f.gt(union, zero),
                    f.gt(f.div(inter, union), threshold))

    return _if_value(em, f.gt(ix1, ix0), overlapping, _false(em))


def _if_value(em: Emitter, cond: SSAValue, then: Callable[[], SSAValue],
              otherwise: SSAValue) -> SSAValue:
    """`then() if cond else otherwise` as an scf.if with one result: `then` is computed
    only when `cond` holds."""
    blocks = [Block(), Block()]
    op = scf.IfOp.create(operands=[cond], result_types=[otherwise.type],
                         regions=[Region(blocks[0]), Region(blocks[1])])
    em.op(op)
    saved = em.b.insertion_point
    try:
        em.b.insertion_point = InsertPoint.at_end(blocks[0])
        em.op(scf.YieldOp(then()))
        em.b.insertion_point = InsertPoint.at_end(blocks[1])
        em.op(scf.YieldOp(otherwise))
    finally:
        em.b.insertion_point = saved
    return op.results[0]


def _any_kept_exceeds(em: Emitter, f: _F32, kept_extents: SSAValue, stride: int,
                      n_kept: SSAValue, box, threshold) -> SSAValue:
    """Whether the IoU of `box` (its extents) with any of the first `n_kept` kept boxes
    (their extents in `kept_extents`, 5 rows of `stride`) exceeds the threshold: a while loop that
    stops at the first that does, as onnxruntime's."""
    i1 = IntegerType(1)
    false = em.value(arith.ConstantOp(IntegerAttr(0, i1)))
    before, after = Block(arg_types=[INDEX, i1]), Block(arg_types=[INDEX, i1])
    loop = scf.WhileOp([em.index(0), false], [INDEX, i1], Region(before), Region(after))
    em.op(loop)
    saved = em.b.insertion_point
    try:
        em.b.insertion_point = InsertPoint.at_end(before)
        j, hit = before.args
        go = _and(em, em.value(arith.CmpiOp(j, n_kept, "slt")),
                  em.value(arith.XOrIOp(hit, _true(em))))
        em.op(scf.ConditionOp(go, j, hit))
        em.b.insertion_point = InsertPoint.at_end(after)
        j, _ = after.args
        exceeds = _iou_exceeds(f, em, lambda k: em.load(kept_extents, [
            em.add_index(j, k * stride)]), box, threshold)
        em.op(scf.YieldOp(em.add_index(j, 1), exceeds))
    finally:
        em.b.insertion_point = saved
    return loop.results[1]


@lowers(glow.NonMaxSuppressionOp)
def non_max_suppression(instr, em: Emitter) -> None:
    """Per batch and class: the candidates passing the score threshold listed in index
    order, made a heap and popped best first (score, then the lower index) as
    onnxruntime's std::priority_queue does, with libstdc++'s steps (`sorting.make_heap`):
    with NaN scores that comparison has no sorted order, and only the same steps give
    the same boxes. Each is kept unless its IoU with a kept box of the class exceeds the
    threshold, until `cap` are kept. O(n log n + n * kept) like onnxruntime's: choosing
    the best open candidate by a scan of all of them each round (O(n^2)) took 10 s on
    SSDlite's 27,000 candidates. The candidate heap, the kept boxes' extents and the
    running counts live in scratch memory."""
    selected_v, count_v, boxes_v, scores_v, max_v, iou_v, thr_v = instr.operands
    a = attrs(instr)
    batches, count, _ = shape(boxes_v)
    classes = shape(scores_v)[1]
    rows = shape(selected_v)[0]
    per_class = rows // (batches * classes)
    center, use_threshold = a.int_attr("center_point_box", 0), a.bool_attr(
        "use_score_threshold", True)
    f = _F32(em)
    out, cnt = _flat(em, selected_v), _flat(em, count_v)
    boxes, scores = _flat(em, boxes_v), _flat(em, scores_v)
    zero64 = em.value(arith.ConstantOp(IntegerAttr(0, i64)))
    em.loop(0, rows * 3, lambda e: em.store(zero64, out, [e]))
    heap = em.scratch(i64, [max(count, 1)])  # the candidates' ids
    stride = max(per_class, 1)  # the kept boxes' x0, x1, y0, y1, area: one row each
    kept_extents = em.scratch(f32, [stride * 5])
    state = em.scratch(i64, [3])  # [rows filled so far, kept in this class, candidates]
    em.store(zero64, state, [em.index(0)])
    requested = em.value(arith.IndexCastOp(em.load(_flat(em, max_v), [em.index(0)]), INDEX))
    cap = em.value(arith.MinSIOp(em.value(arith.MaxSIOp(requested, em.index(0))),
                                 em.index(per_class)))
    iou = em.load(_flat(em, iou_v), [em.index(0)])
    threshold = em.load(_flat(em, thr_v), [em.index(0)])
    true = _true(em)

    def idx(v: SSAValue) -> SSAValue:
        return _cast(em, v, INDEX)

    def i64v(v: SSAValue) -> SSAValue:
        return _cast(em, v, i64)

    def per_class_body(ivs):
        b, c = ivs
        score0 = em.mul_index(em.value(arith.AddiOp(em.mul_index(b, classes), c)), count)
        box0 = em.mul_index(b, count * 4)

        def score_of(candidate: SSAValue) -> SSAValue:
            return em.load(scores, [em.value(arith.AddiOp(score0, candidate))])

        def gather(i, n):
            em.store(i64v(i), heap, [n])
            passes_threshold = f.gt(score_of(i), threshold) if use_threshold else true
            return em.value(arith.AddiOp(n, em.value(arith.SelectOp(
                passes_threshold, em.index(1), em.index(0)))))

        def less(x: SSAValue, y: SSAValue) -> SSAValue:
            """onnxruntime's ScoreIndexPair order: a lower score, or the same and a
            higher index (ordered comparisons: false with NaN, as C++'s)."""
            sx, sy = score_of(x), score_of(y)
            tie = _and(em, em.value(arith.CmpfOp(sx, sy, "oeq")),
                       em.value(arith.CmpiOp(x, y, "sgt")))
            return em.value(arith.OrIOp(em.value(arith.CmpfOp(sx, sy, "olt")), tie))

        n = em.loop_reduce(0, count, em.index(0), gather)
        make_heap(em, heap, n, less)
        em.store(zero64, state, [em.index(1)])

        def visit(t):
            n_kept = idx(em.load(state, [em.index(1)]))

            def consider():
                best = idx(em.load(heap, [em.index(0)]))
                box = _extent(f, em, boxes, em.value(arith.AddiOp(box0, em.mul_index(best, 4))),
                              center)
                suppressed = _any_kept_exceeds(em, f, kept_extents, stride, n_kept, box,
                                               iou)

                def keep():
                    for k, v in enumerate(box):
                        em.store(v, kept_extents, [em.add_index(n_kept, k * stride)])
                    row = em.value(arith.AddiOp(idx(em.load(state, [em.index(0)])), n_kept))
                    for k, v in enumerate((b, c, best)):
                        em.store(i64v(v), out, [em.add_index(em.mul_index(row, 3), k)])
                    em.store(i64v(em.add_index(n_kept, 1)), state, [em.index(1)])

                if_else(em, suppressed, lambda: None, keep)
                pop_heap(em, heap, em.value(arith.SubiOp(n, t)), less)

            if_else(em, em.value(arith.CmpiOp(n_kept, cap, "slt")), consider, lambda: None)

        em.loop(0, n, visit)
        filled = em.value(arith.AddiOp(em.load(state, [em.index(0)]),
                                       em.load(state, [em.index(1)])))
        em.store(filled, state, [em.index(0)])

    em.loop_nest([batches, classes], per_class_body)
    em.store(em.load(state, [em.index(0)]), cnt, [em.index(0)])


def _cast(em: Emitter, v: SSAValue, to) -> SSAValue:
    """An index from an i64 or back."""
    return em.value(arith.IndexCastOp(v, to))


def _true(em: Emitter) -> SSAValue:
    return em.value(arith.ConstantOp(IntegerAttr(1, IntegerType(1))))


def _false(em: Emitter) -> SSAValue:
    return em.value(arith.ConstantOp(IntegerAttr(0, IntegerType(1))))
