"""Threads in the kernels: which loops run in parallel and how they are split.

Design (issue 17, item 1). The kernel generator is the one place that decides the split:
`parallel_ranges` cuts an independent outer dimension (rows of a matrix product, output
channels, elements, images x channels) into at most `em.threads` groups of whole
`granule`s and emits one `scf.for` over the groups marked `glow.parallel = T` (T the
thread count the model is compiled for), with the group's start as an index value and its
size as a constant (the last group's size too, under an `scf.if`), so the loops inside keep
constant trip counts. The LLVM translator (`conversion/loops_to_llvm_ir.py`) outlines
each marked loop that is not inside another into a chunk function over [lo, hi) of the
groups (MLIR's `scf.parallel` → `async`/OpenMP outlining, done in our one-walk
translator) and replaces it by a call of the runtime's

    glow_parallel_for(chunk, ctx, lo, hi, T)

(`targets/cpu/thread_pool.py`: a persistent native pool; the caller thread takes part).
The captured values travel in a small stack struct; the kernel's region pointers are
passed on as `noalias` arguments of the outlined body and the views of them are
recomputed there, so LLVM keeps the alias facts it vectorizes with. The dialect route
(`convert-loops-to-llvm`, glow-opt) ignores the attribute: the same loop, serial.

Why the numbers do not depend on the thread count: only loops whose iterations write
disjoint outputs and share no reduction are marked, and each iteration computes exactly
what it computes serially (the same code on the same elements, sums in the same order);
the test runs 1, 2 and 3 threads and compares bit for bit. With one thread nothing is
marked: the code is what it was (bundles unchanged).

Scratch. Kernel scratch (`Emitter.scratch`) is shared by default (im2col columns filled
before the parallel product reads them); scratch asked with `private=True` (a matrix
product's accumulation tile) is per worker: its view carries `glow.private`, the kernel
function gets `glow.worker_scratch = S` (its whole scratch, S bytes, repeated once per
worker: the scratch argument is S x T bytes), and in an outlined loop worker w's view is
offset by w x S. The pool gives worker numbers below T.

Small kernels stay serial (`PARALLEL_MIN_WORK`): waking the pool costs more than it saves.

Shared regions (`shared_ranges`): kernels whose splits match and whose groups read only
what the same group of the kernel before wrote run in one kernel function and one
parallel loop (one wake-up and join, ~3 us of CPU time per thread in static parts on
this 2-vCPU KVM guest): a 1x1 expansion and the depthwise convolution reading it
(`conv_pairs.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import InsertPoint
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Region, SSAValue

from glow_mlir.conversion.glow_ir_to_loops.emitter import INDEX, Emitter

PARALLEL_ATTR = "glow.parallel"
"""On an `scf.for` without iter_args: its iterations are independent; run them on up to
this many threads."""
PRIVATE_ATTR = "glow.private"
"""On a `memref.view` of a kernel's scratch argument: each worker has its own copy."""
WORKER_SCRATCH_ATTR = "glow.worker_scratch"
"""On a kernel function with private scratch and parallel loops: the bytes of scratch per
worker (its last argument is the scratch, this many bytes per worker)."""

PARALLEL_MIN_WORK = 1_000_000
"""Least work for which a kernel splits its outer loop: multiply-adds for the products and
convolutions, bytes moved (times a few operations for the normalizations) for the
memory-bound kernels. Measured with `python benchmarks/parallel_cutoff.py` (2 cores,
AMD EPYC under KVM, shared: load 8-10): a split costs ~5 us of extra CPU time
(`glow_parallel_for` waking a sleeping worker and joining it, whatever the part's
length), plus the time the scheduler takes to run the worker (5-50 us on an idle Linux;
much more under load, when the caller ends up running both parts itself). A kernel of
1M multiply-adds takes ~70 us on one core here (15 G multiply-adds/s in these
kernels), 1 MB of element-wise traffic ~50-100 us: half of that saved is worth a wake-up;
at the former cut-off of 200k (~15 us) the saving was the cost. Single kernels split at
any size (cut-off 0) ran 0.67-1.0x of their serial time below 1M on this loaded machine
(`parallel_cutoff.py`'s second table)."""


def parallel_ranges(em: Emitter, total: int, granule: int, work: int,
                    body: Callable[[SSAValue | None, int], None],
                    tail_cost: float = 1.0) -> None:
    """body(start, count) over [0, total) cut into groups of whole `granule`s (except the
    end), at most `em.threads` of them, in a loop marked parallel; `start` is the group's
    first index (an index value), `count` its size (a constant). Serial, as one call
    body(None, total) (no offset: the code of one thread), when the kernel is compiled for
    one thread, has less than `PARALLEL_MIN_WORK` of `work`, or fewer than two groups.
    `tail_cost`: what an index of the last partial granule costs against one of a whole
    granule (`group_size`). Inside `shared_ranges`: body(start, count) of the group the
    enclosing region gives, no loop of its own."""
    shared = getattr(em, "shared_split", None)
    if shared is not None:
        em.shared_split = None
        if shared[0] != total:
            raise ValueError(f"a kernel in a shared parallel region splits {total} "
                             f"indices, the region {shared[0]}")
        body(shared[1], shared[2])
        return
    per = group_size(em, total, granule, work, tail_cost)
    if per is None:
        body(None, total)
        return
    groups = -(-total // per)
    last = total - (groups - 1) * per
    em.parallel_loops += 1
    em.parallel_groups = max(em.parallel_groups, groups)

    def group(g: SSAValue) -> None:
        start = em.mul_index(g, per)
        if last == per:
            body(start, per)
            return
        is_last = em.value(arith.CmpiOp(g, em.index(groups - 1), "eq"))
        if_else(em, is_last, lambda: body(start, last), lambda: body(start, per))

    block = Block(arg_types=[INDEX])
    loop = scf.ForOp.create(operands=[em.index(0), em.index(groups), em.index(1)],
                            regions=[Region(block)])
    loop.attributes[PARALLEL_ATTR] = IntegerAttr(em.threads, i64)
    em.op(loop)
    saved = em.b.insertion_point
    em.b.insertion_point = InsertPoint.at_end(block)
    em.parallel_depth += 1
    try:
        group(block.args[0])
    finally:
        em.parallel_depth -= 1
    em.op(scf.YieldOp.create())
    em.b.insertion_point = saved


def shared_ranges(em: Emitter, total: int, granule: int, work: int,
                  kernels: Sequence[Callable[[], None]]) -> None:
    """Several kernels in one parallel region (one wake-up and join of the pool, not one
    per kernel): `parallel_ranges` over [0, total) whose body emits each kernel in turn,
    each kernel's own `parallel_ranges` (over the same `total` indices: its first and only
    split) taking the region's group instead of a loop. Only correct when what a kernel
    computes for a group reads nothing another group of an earlier kernel writes (the
    caller checks: `conv_pairs.pairable`); the numbers are those of the kernels split
    alone, since each computes every index as its serial code does."""
    def body(start: SSAValue | None, count: int) -> None:
        for emit in kernels:
            em.shared_split = (total, start, count)
            emit()
            if em.shared_split is not None:
                em.shared_split = None
                raise ValueError("a kernel in a shared parallel region did not split")

    parallel_ranges(em, total, granule, work, body)


def group_size(em: Emitter, total: int, granule: int, work: int,
               tail_cost: float = 1.0) -> int | None:
    """The size of `parallel_ranges`' groups for these arguments (the last may be
    smaller), or None when it runs serially: a kernel may size per-thread buffers by it,
    or choose what to split. The groups are equal (the last takes what is left) unless
    the indices past the last whole granule cost `tail_cost` times what the others do (a
    gemm's columns past its micro-kernel's last whole block, `kernels_matmul.gemm`):
    then the size balances the last group, which holds them, against the others."""
    threads = getattr(em, "threads", 1)
    if em.parallel_depth:  # inside a parallel loop already: serial
        return None
    units = -(-total // granule) if granule > 0 else 0
    groups = min(threads, units)
    if threads <= 1 or groups < 2 or work < PARALLEL_MIN_WORK:
        return None
    per = -(-units // groups) * granule
    if tail_cost != 1.0 and total % granule:
        per = balanced_size(total, granule, groups, tail_cost)
    return per if -(-total // per) >= 2 else None


def balanced_size(total: int, granule: int, groups: int, tail_cost: float) -> int:
    """The group size (whole granules) of at most `groups` groups over [0, total) whose
    costliest group costs least, the indices of the last partial granule (in the last
    group) costing `tail_cost` each and the others 1."""
    rest = total % granule

    def cost(per: int) -> float:
        last = total - (-(-total // per) - 1) * per
        return max(per, last - rest + rest * tail_cost)

    sizes = [g * granule for g in range(1, total // granule + 1)
             if -(-total // (g * granule)) <= groups]
    return min(sizes, key=lambda per: (cost(per), -per))  # ties: fewer groups


def parallel_loop(em: Emitter, total: int, work: int, body: Callable[[SSAValue], None],
                  granule: int = 1) -> None:
    """`for i in range(total): body(i)` with its iterations split over threads as
    `parallel_ranges` does (serial: exactly `em.loop(0, total, body)`)."""
    def ranges(start: SSAValue | None, count: int) -> None:
        em.loop(0, count, lambda i: body(shifted(start, em, i)))

    parallel_ranges(em, total, granule, work, ranges)


def if_else(em: Emitter, cond: SSAValue, then: Callable[[], None],
            otherwise: Callable[[], None]) -> None:
    """`if cond: then() else: otherwise()` as an scf.if without results."""
    blocks = [Block(), Block()]
    em.op(scf.IfOp.create(operands=[cond], regions=[Region(blocks[0]), Region(blocks[1])]))
    saved = em.b.insertion_point
    for block, fn in zip(blocks, (then, otherwise)):
        em.b.insertion_point = InsertPoint.at_end(block)
        fn()
        em.op(scf.YieldOp.create())
    em.b.insertion_point = saved


def shifted(start: SSAValue | None, em: Emitter, i: SSAValue) -> SSAValue:
    """`start + i` (`i` itself without a start: the serial code)."""
    if start is None:
        return i
    flags = {"overflowFlags": arith.IntegerOverflowAttr("none")}
    return em.value(arith.AddiOp.create(operands=[start, i], result_types=[INDEX],
                                        properties=flags))
