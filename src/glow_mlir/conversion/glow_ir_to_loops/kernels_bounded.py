"""Loop nests of the instructions whose output length is known only at run time
(`ir/bounded_outputs.py`): non_zero, non_max_suppression. They fill a buffer sized for
the upper bound and store the length they filled in a 0-d i64 count."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    f32,
    i8,
    i64,
)
from xdsl.ir import SSAValue

from glow_mlir.conversion.glow_ir_to_loops import lowers
from glow_mlir.conversion.glow_ir_to_loops import storage_type as machine
from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, byte_view
from glow_mlir.conversion.glow_ir_to_loops.kernels_common import (
    attrs,
    elem,
    for_carry,
    shape,
    size,
)
from glow_mlir.conversion.glow_ir_to_loops.parallel import if_else
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
               "div": arith.DivfOp, "min": arith.MinimumfOp, "max": arith.MaximumfOp}
        cls = ops[name]
        return lambda a, b: self.em.value(cls(a, b))

    def gt(self, a, b):
        return self.em.value(arith.CmpfOp(a, b, "ogt"))


def _and(em: Emitter, *conds: SSAValue) -> SSAValue:
    out = conds[0]
    for c in conds[1:]:
        out = em.value(arith.AndIOp(out, c))
    return out


def _extent(f: _F32, em: Emitter, boxes: SSAValue, base: SSAValue, center: int):
    """(x_min, x_max, y_min, y_max) of the box at `base` (the reference's `_extent`)."""
    v = [em.load(boxes, [em.add_index(base, k)]) for k in range(4)]
    if center:
        half_w, half_h = f.div(v[2], f.c(2.0)), f.div(v[3], f.c(2.0))
        return f.sub(v[0], half_w), f.add(v[0], half_w), f.sub(v[1], half_h), f.add(v[1], half_h)
    return f.min(v[1], v[3]), f.max(v[1], v[3]), f.min(v[0], v[2]), f.max(v[0], v[2])


def _iou_exceeds(f: _F32, em: Emitter, boxes, a_base, b_base, center: int, threshold):
    """onnxruntime's SuppressByIOU as one i1."""
    ax0, ax1, ay0, ay1 = _extent(f, em, boxes, a_base, center)
    bx0, bx1, by0, by1 = _extent(f, em, boxes, b_base, center)
    ix0, ix1, iy0, iy1 = f.max(ax0, bx0), f.min(ax1, bx1), f.max(ay0, by0), f.min(ay1, by1)
    inter = f.mul(f.sub(ix1, ix0), f.sub(iy1, iy0))
    area_a = f.mul(f.sub(ax1, ax0), f.sub(ay1, ay0))
    area_b = f.mul(f.sub(bx1, bx0), f.sub(by1, by0))
    union = f.sub(f.add(area_a, area_b), inter)
    zero = f.c(0.0)
    return _and(em, f.gt(ix1, ix0), f.gt(iy1, iy0), f.gt(inter, zero), f.gt(area_a, zero),
                f.gt(area_b, zero), f.gt(union, zero), f.gt(f.div(inter, union), threshold))


@lowers(glow.NonMaxSuppressionOp)
def non_max_suppression(instr, em: Emitter) -> None:
    """Per batch and class: candidates flagged in a scratch array (those failing the score
    threshold start as done), then up to `count` rounds each taking the best candidate not
    done (ties: the lower index, as a strict comparison scanning upwards keeps), which is
    kept unless its IoU with a kept box of the class exceeds the threshold. The kept
    indices of the class and the running counts live in scratch memory."""
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
    done = em.scratch(i8, [count])
    kept = em.scratch(i64, [per_class])
    state = em.scratch(i64, [2])  # [rows filled so far, kept in this class]
    em.store(zero64, state, [em.index(0)])
    requested = em.value(arith.IndexCastOp(em.load(_flat(em, max_v), [em.index(0)]), INDEX))
    cap = em.value(arith.MinSIOp(em.value(arith.MaxSIOp(requested, em.index(0))),
                                 em.index(per_class)))
    iou = em.load(_flat(em, iou_v), [em.index(0)])
    threshold = em.load(_flat(em, thr_v), [em.index(0)])
    one8, zero8 = (em.value(arith.ConstantOp(IntegerAttr(v, i8))) for v in (1, 0))

    def idx(v: SSAValue) -> SSAValue:
        return em.value(arith.IndexCastOp(v, INDEX))

    def i64v(v: SSAValue) -> SSAValue:
        return em.value(arith.IndexCastOp(v, i64))

    def per_class_body(ivs):
        b, c = ivs
        score0 = em.mul_index(em.value(arith.AddiOp(em.mul_index(b, classes), c)), count)
        box0 = em.mul_index(b, count * 4)
        em.store(zero64, state, [em.index(1)])

        def flag(i):
            fails = em.value(arith.XOrIOp(
                f.gt(em.load(scores, [em.value(arith.AddiOp(score0, i))]), threshold),
                em.value(arith.ConstantOp(IntegerAttr(1, IntegerType(1))))))
            em.store(em.value(arith.SelectOp(fails, one8, zero8)) if use_threshold else zero8,
                     done, [i])

        em.loop(0, count, flag)

        def round_(_step):
            def scan(i, acc):
                best, best_score, found = acc
                s = em.load(scores, [em.value(arith.AddiOp(score0, i))])
                open_ = em.value(arith.CmpiOp(em.load(done, [i]), zero8, "eq"))
                first = em.value(arith.XOrIOp(found, em.value(arith.ConstantOp(
                    IntegerAttr(1, IntegerType(1))))))
                better = _and(em, open_, em.value(arith.OrIOp(first, f.gt(s, best_score))))
                return [em.value(arith.SelectOp(better, i, best)),
                        em.value(arith.SelectOp(better, s, best_score)),
                        em.value(arith.OrIOp(found, better))]

            best, _, found = for_carry(em, 0, count, [
                em.index(0), f.c(float("-inf")),
                em.value(arith.ConstantOp(IntegerAttr(0, IntegerType(1))))], scan)
            n_kept = idx(em.load(state, [em.index(1)]))
            take = _and(em, found, em.value(arith.CmpiOp(n_kept, cap, "slt")))

            def taken():
                em.store(one8, done, [best])
                best_base = em.value(arith.AddiOp(box0, em.mul_index(best, 4)))
                suppressed = em.loop_reduce(0, n_kept, em.value(arith.ConstantOp(
                    IntegerAttr(0, IntegerType(1)))), lambda j, acc: em.value(arith.OrIOp(
                        acc, _iou_exceeds(f, em, boxes, em.value(arith.AddiOp(
                            box0, em.mul_index(idx(em.load(kept, [j])), 4))),
                            best_base, center, iou))))

                def keep():
                    em.store(i64v(best), kept, [n_kept])
                    row = em.value(arith.AddiOp(idx(em.load(state, [em.index(0)])), n_kept))
                    for k, v in enumerate((b, c, best)):
                        em.store(i64v(v), out, [em.add_index(em.mul_index(row, 3), k)])
                    em.store(i64v(em.add_index(n_kept, 1)), state, [em.index(1)])

                if_else(em, suppressed, lambda: None, keep)

            if_else(em, take, taken, lambda: None)

        em.loop(0, count, round_)
        filled = em.value(arith.AddiOp(em.load(state, [em.index(0)]),
                                       em.load(state, [em.index(1)])))
        em.store(filled, state, [em.index(0)])

    em.loop_nest([batches, classes], per_class_body)
    em.store(em.load(state, [em.index(0)]), cnt, [em.index(0)])
