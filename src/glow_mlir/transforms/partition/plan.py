"""Which ops of an optimized `glow` graph run on which device (Glow's Partitioner,
lib/Partitioner): the plan the splitter (`split.py`) turns into a DAG of sub-functions.

The graph's ops are taken in the order the graph pipeline scheduled them (`steps`:
every op but constants and the terminator; a constant goes, cloned, to every part that
reads it). Four ways to cut them (Glow's four):

- **heterogeneous** (`backendBasedPartition`): each op goes to the first device kind, in
  the order the devices are given, that runs it (`PartDevice.runs`, the backend's
  isOpSupported); consecutive ops of one kind form a part;
- **memory-based** (`memoryUsageBasedPartition`): a part grows until the next op would
  make it exceed the memory of the device it goes to (the devices with the most free
  memory first, `by_room`); the fewest parts that fit;
- **load-balanced** (`loadBalancedPartition`): as many parts as devices, cut where the
  largest part's roofline cost (`PartDevice.cost`) is smallest (a binary search on that
  cost, each candidate cut greedily, memory still respected);
- **user-given**: op name -> device index (`glow-compile --emit graph` shows the names);
  an op left out goes with the op before it.

Parts that are contiguous runs of the schedule can only feed later parts, so the first
three give an acyclic DAG by construction; a user's parts are checked (`validate`). Every
plan is validated: a device index beyond the devices, an op its device does not run, a
device whose parts need more memory than it has, a cycle between parts; each error says
which part or op, and how many bytes or devices.

A part's bytes (what the device must hold): its constants, its inputs and outputs (the
compiled part's placeholders, held for the whole run), and the peak of the other values
it defines while they are live in schedule order (`_run_area`). They estimate what the
compiled part plans; the runtime's
`DeviceManager` checks the compiled figures.

A device runs one part at a time (its worker, `DeviceManager.run_function`), so the
parts it holds share one run area: a device needs the weights of all its parts plus the
largest of their run areas (inputs, activations and outputs: filled when a part starts,
read back when it ends), not the sum (`device_footprint`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import ConstantLike

from glow_mlir.analysis.graph_memory import body_ops, tensor_bytes
from glow_mlir.analysis.instr_memory import DEFAULT_ALIGNMENT
from glow_mlir.analysis.memory_planner import align_up
from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit
from glow_mlir.ir.errors import UserError


class PartitionError(UserError):
    """A partition that cannot be made or does not fit: says what and how much."""


class PartDevice(Protocol):
    """What the partitioner asks of a device (the runtime's `Device`)."""

    @property
    def kind(self) -> str: ...

    @property
    def memory_bytes(self) -> int: ...

    def runs(self, op: Operation) -> bool:
        """Can this device's backend run `op` as it is?"""
        ...

    def cost(self, op: Operation) -> float:
        """The op's roofline time on this device, in seconds."""
        ...

    # optional: `constant_form(op, index) -> (form, bytes) | None`, the form its backend
    # stores a constant operand in when it repacks it (`_Graph.use_forms`)


def fmt_bytes(n: int) -> str:
    """`12,345,678 bytes (11.8 MiB)`: exact, and readable."""
    return f"{n:,} bytes ({n / 2**20:.1f} MiB)"


def op_label(op: Operation) -> str:
    """`%relu1 (glow.convolution)`: how errors name an op."""
    hint = op.results[0].name_hint if op.results else None
    return f"%{hint} ({op.name})" if hint else op.name


@dataclass
class Part:
    """One sub-function of the plan, placed on one device."""

    index: int
    device: int
    ops: list[Operation]
    constants: list[Operation] = field(default_factory=list)
    inputs: list[SSAValue] = field(default_factory=list)
    """Values read from outside the part (graph inputs, other parts' outputs), in order."""
    outputs: list[SSAValue] = field(default_factory=list)
    """Values the part defines and something outside it reads (another part, the return)."""
    weight_bytes: int = 0
    input_bytes: int = 0
    activation_bytes: int = 0
    """Its outputs (held for the whole run, as the compiled part's placeholders are) and
    the most bytes of its other values live at once (`_run_area`)."""
    cost: float = 0.0
    """Seconds on its device (the sum of its ops' roofline times)."""
    deps: list[int] = field(default_factory=list)
    """Parts whose outputs it reads."""

    @property
    def bytes(self) -> int:
        return self.weight_bytes + self.input_bytes + self.activation_bytes

    @property
    def area_bytes(self) -> int:
        """What one run of the part fills and then frees (its inputs, activations and
        outputs): the device's parts share it, one running at a time."""
        return self.input_bytes + self.activation_bytes


def device_footprint(held: Iterable[tuple[int, int]]) -> int:
    """The bytes a device needs for parts given as (weight bytes, run area bytes): all
    the weights, and the largest run area, shared because the device runs one part at a
    time (module docstring)."""
    weights = area = 0
    for w, a in held:
        weights += w
        area = max(area, a)
    return weights + area


@dataclass
class PartitionPlan:
    """Parts in a topological order (a part's deps come before it)."""

    fn: func.FuncOp
    devices: Sequence[PartDevice]
    parts: list[Part]
    strategy: str

    def device_bytes(self) -> dict[int, int]:
        """Bytes each used device must hold (its parts' weights and their largest run
        area, `device_footprint`)."""
        held: dict[int, list[tuple[int, int]]] = {}
        for p in self.parts:
            held.setdefault(p.device, []).append((p.weight_bytes, p.area_bytes))
        return {d: device_footprint(h) for d, h in held.items()}

    def transfer_bytes(self) -> int:
        """Bytes that move between parts per run (each part's inputs that another part
        defines)."""
        return sum(tensor_bytes(v.type) for p in self.parts for v in p.inputs
                   if not isinstance(v, BlockArgument))


class _Graph:
    """The function's steps, where each value is defined and last used."""

    def __init__(self, fn: func.FuncOp):
        ops, terminator = body_ops(fn)
        self.fn = fn
        self.block: Block = fn.body.blocks.first  # type: ignore[assignment]
        self.steps = [op for op in ops if not op.has_trait(ConstantLike)]
        self.index = {op: i for i, op in enumerate(self.steps)}
        self.terminator = terminator
        self.returned = set(terminator.operands) if terminator is not None else set()
        end = len(self.steps)
        self.glued = [False] * (end + 1)
        """`glued[i]`: no cut between steps i-1 and i (`_glued`)."""
        for i in range(1, end):
            self.glued[i] = _glued(self.steps[i - 1], self.steps[i], self.glued[i - 1])
        # values whose last reader is step i (the return counts as step `end`)
        self.closing: list[list[SSAValue]] = [[] for _ in range(end + 1)]
        for i, op in enumerate(self.steps):
            for r in op.results:
                last = max((self.index.get(u.operation, end) for u in r.uses), default=i)
                self.closing[last].append(r)
        self.form: Callable[[Operation, int], tuple[str, int] | None] = lambda op, k: None
        """The form a backend stores operand k of a step in (`PartDevice.constant_form`),
        None for as it is: set by `use_forms` for the plan's devices."""
        self.in_place: set[SSAValue] = set()
        """Results written over an operand that dies at their step (`_in_place`)."""
        for i, op in enumerate(self.steps):
            if _in_place(op, self.closing[i], self.returned):
                self.in_place.add(op.results[0])

    def use_forms(self, devices: Sequence[PartDevice]) -> _Graph:
        """Weights counted in the form the devices' backends store them (the cpu's
        packed filters): the first backend that repacks an operand decides (an upper
        bound for a part on another)."""
        asks = [f for d in {(d.kind, getattr(d, "backend", "")): d for d in devices}.values()
                if (f := getattr(d, "constant_form", None)) is not None]
        if asks:
            self.form = lambda op, k: next((r for f in asks if (r := f(op, k))), None)
        return self

    def constant_bytes(self, readers: Iterable[tuple[Operation, int, SSAValue]]) -> int:
        """The weight bytes of a part whose steps read constants as (op, index, value):
        each constant once per form it is read in (`form`)."""
        forms = {(v, self.form(op, k)) for op, k, v in readers if _is_constant(v)}
        return sum(tensor_bytes(v.type) if f is None else f[1] for v, f in forms)

    def born(self, v: SSAValue) -> int:
        """The step from which `v` has bytes of its own: the step after its op's when it
        is written in place (that step, the operand holds them), else its op's."""
        s = self.index[v.owner]  # type: ignore[index]
        return s + 1 if v in self.in_place else s

    def unit_end(self, i: int) -> int:
        """The end of the glued run of steps that starts at step i."""
        j = i + 1
        while j < len(self.steps) and self.glued[j]:
            j += 1
        return j

    def owner_step(self, v: SSAValue) -> int | None:
        """The step defining `v`; None for a graph input or a constant."""
        owner = v.owner
        return self.index.get(owner) if isinstance(owner, Operation) else None


def _glued(prev: Operation, op: Operation, prev_glued: bool) -> bool:
    """Is `op` the epilogue of a product before it (an element-wise op reading the
    convolution or matmul right before it, or the chain after one)? The backends run such
    a chain as the product's epilogue (`analysis/epilogue_fusion.py`), which rounds as the
    chain in one part does, not as the ops in two: a cut there would change the outputs'
    bits (measured on ResNet-50's residual adds on the accelerator), so parts keep them
    together."""
    if accel_unit(op) is not AccelUnit.ELEMENTWISE:
        return False
    if not any(r in op.operands for r in prev.results):
        return False
    unit = accel_unit(prev)
    return unit is AccelUnit.MATMUL or (unit is AccelUnit.ELEMENTWISE and prev_glued)


def _in_place(op: Operation, dying: list[SSAValue], returned: set[SSAValue]) -> bool:
    """Does `op` write its result over an operand's buffer? An element-wise op whose
    operand of the same bytes has its last reader here: the instruction optimizer shares
    their buffer (Glow's buffer sharing), as the backends' fused epilogues do."""
    if accel_unit(op) is not AccelUnit.ELEMENTWISE or len(op.results) != 1:
        return False
    nbytes = tensor_bytes(op.results[0].type)
    return any(v in dying and v not in returned and tensor_bytes(v.type) == nbytes
               for v in op.operands)


def _is_constant(v: SSAValue) -> bool:
    return isinstance(v.owner, Operation) and v.owner.has_trait(ConstantLike)


class _Growing:
    """The bytes of a contiguous run of steps as it grows by one step (for the greedy
    cuts, which try every step; `finish` measures a final part exactly): its weights,
    inputs and outputs, and the peak of its other values (`_run_area`)."""

    def __init__(self, g: _Graph, start: int):
        self.g, self.start = g, start
        self.consts: set[tuple[SSAValue, tuple[str, int] | None]] = set()
        """(constant, form) pairs the run reads (`_Graph.constant_bytes`)."""
        self.ins: set[SSAValue] = set()
        self.const_bytes = self.in_bytes = self.defined = self.closed = self.peak = 0
        self.profile: list[int] = []
        """Per step of the run, the bytes of its values that end inside it and are live then."""
        self.cost = 0.0

    def try_add(self, i: int, cost: float) -> tuple[int, float]:
        """(bytes, cost) the run would have with step `i` added; `commit` adds it."""
        op = self.g.steps[i]
        const_bytes, in_bytes = self.const_bytes, self.in_bytes
        new_consts = {(v, self.g.form(op, k)) for k, v in enumerate(op.operands)
                      if _is_constant(v)} - self.consts
        const_bytes += sum(tensor_bytes(v.type) if f is None else f[1] for v, f in new_consts)
        for v in set(op.operands):
            if _is_constant(v):
                pass
            elif v not in self.ins:
                s = self.g.owner_step(v)
                if s is None or s < self.start:
                    in_bytes += _area_bytes(v)
        defined = self.defined + sum(_area_bytes(r) for r in op.results)
        # the values whose last reader is step i stop being outputs: live from their step
        ending = [(self.g.born(v) - self.start, _area_bytes(v)) for v in self.g.closing[i]
                  if (s := self.g.owner_step(v)) is not None and s >= self.start
                  and v not in self.g.returned and self.g.born(v) <= i]
        closed_bytes = sum(_area_bytes(v) for v in self.g.closing[i]
                           if (s := self.g.owner_step(v)) is not None and s >= self.start
                           and v not in self.g.returned)
        closed = self.closed + closed_bytes
        here = i - self.start
        lo = min((s for s, _ in ending), default=here)
        added = [0] * (here + 1 - lo)
        for s, n in ending:
            for t in range(s - lo, here + 1 - lo):
                added[t] += n
        prev = self.profile
        peak = max(self.peak, max((prev[lo + t] if lo + t < len(prev) else 0) + a
                                  for t, a in enumerate(added)))
        total = const_bytes + _run_area(in_bytes, defined - closed, peak)
        self._pending = (const_bytes, in_bytes, defined, closed, peak, op, lo, added)
        self._new_consts = new_consts
        self.pending_weights = const_bytes
        """The weights among the bytes `try_add` returned (the rest is the run area)."""
        return total, self.cost + cost

    def commit(self, cost: float) -> None:
        const_bytes, in_bytes, defined, closed, peak, op, lo, added = self._pending
        self.consts |= self._new_consts
        for v in op.operands:
            if not _is_constant(v):
                s = self.g.owner_step(v)
                if s is None or s < self.start:
                    self.ins.add(v)
        self.profile.append(0)
        for t, a in enumerate(added):
            self.profile[lo + t] += a
        self.const_bytes, self.in_bytes, self.defined, self.closed, self.peak = (
            const_bytes, in_bytes, defined, closed, peak)
        self.cost += cost


def _area_bytes(v: SSAValue) -> int:
    """A value's bytes in the run area: rounded up to the planner's alignment, as each
    placeholder and arena buffer is."""
    return align_up(tensor_bytes(v.type), DEFAULT_ALIGNMENT)


def _run_area(input_bytes: int, output_bytes: int, inner_peak: int) -> int:
    """A part's run area as its compiled program lays it out: its inputs and outputs are
    placeholders, held for the whole run (an output computed last still has its bytes
    while the first op runs), and its other values share the activation arena, whose
    size is at least their peak (`analysis/memory_planner.py`: the plan reaches the
    peak unless the lifetimes fragment it)."""
    return input_bytes + output_bytes + inner_peak


# ---------------------------------------------------------------------- device kinds


def _kinds(devices: Sequence[PartDevice]) -> list[str]:
    """Device kinds in the order they are first given (the heterogeneous priority)."""
    return list(dict.fromkeys(d.kind for d in devices))


def _of_kind(devices: Sequence[PartDevice], kind: str) -> list[int]:
    return [i for i, d in enumerate(devices) if d.kind == kind]


def by_room(devices: Sequence[PartDevice], kind: str) -> list[int]:
    """The kind's devices in the order the strategies fill them: most free memory first,
    ties in the given order (the host's: emptiest first). A model that fits one device
    whole goes there as one part, and a full device is taken last, not the measure of all."""
    return sorted(_of_kind(devices, kind), key=lambda i: -devices[i].memory_bytes)


def kind_word(devices: Sequence[PartDevice], kind: str) -> str:
    """`'accel' ` when the devices are of several kinds, else nothing: one kind's name
    may not be what the user chose (`--backend interpreter` runs on 'cpu' devices)."""
    return f"'{kind}' " if len(_kinds(devices)) > 1 else ""


def op_too_big(op: Operation, nbytes: int, devices: Sequence[PartDevice], kind: str
               ) -> PartitionError:
    most = max(devices[i].memory_bytes for i in _of_kind(devices, kind))
    return PartitionError(f"{op_label(op)} alone needs {fmt_bytes(nbytes)} (its weights, "
                          f"inputs and results); the largest {kind_word(devices, kind)}"
                          f"device has {most:,} bytes free ({most / 2**20:.1f} MiB)")


def no_room(devices: Sequence[PartDevice], kind: str) -> PartitionError:
    idx = by_room(devices, kind)
    free = ", ".join(f"{devices[i].memory_bytes:,}" for i in idx)
    many = "s" if len(idx) > 1 else ""
    return PartitionError(f"the model does not fit {len(idx)} {kind_word(devices, kind)}"
                          f"device{many} with {free} bytes free: add devices or memory")


def _labels(g: _Graph, devices: Sequence[PartDevice]) -> list[str]:
    """Each step's device kind: the first kind (in device order) whose device runs it."""
    firsts = {k: devices[_of_kind(devices, k)[0]] for k in _kinds(devices)}
    labels, missing = [], []
    for op in g.steps:
        kind = next((k for k, d in firsts.items() if d.runs(op)), None)
        if kind is None:
            missing.append(op)
        labels.append(kind or "")
    if missing:
        shown = ", ".join(op_label(op) for op in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise PartitionError(f"no device runs {len(missing)} op(s): {shown}{more} (device "
                             f"kinds: {', '.join(firsts)})")
    return labels


# ---------------------------------------------------------------------- greedy cuts


def _cut(g: _Graph, devices: Sequence[PartDevice], labels: Sequence[str],
         max_cost: float | None) -> list[tuple[int, int, str]]:
    """Contiguous runs (start, end exclusive, kind): a new run where the kind changes, or
    where the next step would exceed the free memory of the device the run goes to (the
    kind's devices `by_room`, in turn) or `max_cost` (before the glued run that step is
    in, unless that run alone fills the part)."""
    rooms = {k: [devices[i].memory_bytes for i in by_room(devices, k)] for k in _kinds(devices)}
    taken = {k: 0 for k in rooms}  # runs of each kind begun

    def room(kind: str) -> int:  # of the device the kind's latest run goes to
        return rooms[kind][(taken[kind] - 1) % len(rooms[kind])]

    rep = {k: devices[_of_kind(devices, k)[0]] for k in _kinds(devices)}
    runs: list[tuple[int, int, str]] = []
    start = 0
    grow: _Growing | None = None
    i, n = 0, len(g.steps)
    while i < n:
        op, kind = g.steps[i], labels[i]
        c = rep[kind].cost(op)
        if grow is not None and labels[start] == kind:
            nbytes, cost = grow.try_add(i, c)
            if nbytes <= room(kind) and (max_cost is None or cost <= max_cost):
                grow.commit(c)
                i += 1
                continue
            u = i  # cut before the glued run i is in, when the part holds more than it
            while u > start and g.glued[u] and labels[u - 1] == kind:
                u -= 1
            if u > start and u < i:
                runs.append((start, u, kind))
                start, grow = u, _Growing(g, u)
                taken[kind] += 1
                for k in range(u, i):  # then step i again, on the new run
                    grow.try_add(k, rep[kind].cost(g.steps[k]))
                    grow.commit(rep[kind].cost(g.steps[k]))
                continue
        if grow is not None:
            runs.append((start, i, labels[start]))
        start, grow = i, _Growing(g, i)
        taken[kind] += 1
        nbytes, _ = grow.try_add(i, c)
        if nbytes > max(rooms[kind]):
            raise op_too_big(op, nbytes, devices, kind)
        if nbytes > room(kind):
            raise no_room(devices, kind)
        grow.commit(c)
        i += 1
    if grow is not None:
        runs.append((start, len(g.steps), labels[start]))
    return runs


def _place(runs: Sequence[tuple[int, int, str]], devices: Sequence[PartDevice]) -> list[int] | None:
    """A device per run: the kind's devices `by_room`, one run each; None when a kind has
    more runs than devices."""
    placed, used = [], {k: 0 for k in _kinds(devices)}
    for _, _, kind in runs:
        idx = by_room(devices, kind)
        if used[kind] >= len(idx):
            return None
        placed.append(idx[used[kind]])
        used[kind] += 1
    return placed


def _place_shared(runs: Sequence[tuple[int, int, str]],
                  devices: Sequence[PartDevice]) -> list[int]:
    """A device per run: the kind's devices `by_room` in turn, several runs each."""
    placed, used = [], {k: 0 for k in _kinds(devices)}
    for _, _, kind in runs:
        idx = by_room(devices, kind)
        placed.append(idx[used[kind] % len(idx)])
        used[kind] += 1
    return placed


def _too_few_devices(runs: Sequence[tuple[int, int, str]], devices: Sequence[PartDevice],
                     g: _Graph) -> PartitionError:
    counts: dict[str, int] = {}
    for _, _, k in runs:
        counts[k] = counts.get(k, 0) + 1
    kind = next(k for k, n in counts.items() if n > len(_of_kind(devices, k)))
    have = by_room(devices, kind)
    free = ", ".join(f"{devices[i].memory_bytes:,}" for i in have)
    return PartitionError(
        f"the model needs {counts[kind]} {kind_word(devices, kind)}devices (its parts by "
        f"memory); there are {len(have)}, with {free} bytes free: add devices or memory")


# ---------------------------------------------------------------------- the strategies


def memory_plan(fn: func.FuncOp, devices: Sequence[PartDevice]) -> PartitionPlan:
    """Heterogeneous by op support, then the fewest contiguous parts that fit (one when
    the whole graph fits one device)."""
    _check_devices(devices)
    g = _Graph(fn).use_forms(devices)
    labels = _labels(g, devices)
    runs = _cut(g, devices, labels, None)
    placed = _place(runs, devices)
    if placed is None:
        # more runs of a kind than devices of it: the ops of two kinds alternating (an op
        # the accelerator lacks between two it runs) cut runs that are small, and a
        # device holds several parts in its memory (one run area for them all): share
        # the kind's devices in turn, if the check of every device's bytes passes
        try:
            return _finish(g, devices, [(list(range(s, e)), d) for (s, e, _), d
                                        in zip(runs, _place_shared(runs, devices))], "memory")
        except PartitionError:
            raise _too_few_devices(runs, devices, g) from None
    return _finish(g, devices, [(list(range(s, e)), d) for (s, e, _), d in zip(runs, placed)],
                   "memory")


def user_plan(fn: func.FuncOp, devices: Sequence[PartDevice],
              assignment: Mapping[str, int]) -> PartitionPlan:
    """The user's op name -> device index; an unnamed op goes with the op before it (the
    first ops, before any named one, with the first named op). One part per device."""
    _check_devices(devices)
    g = _Graph(fn).use_forms(devices)
    names = {op.results[0].name_hint: i for i, op in enumerate(g.steps)
             if op.results and op.results[0].name_hint}
    unknown = [n for n in assignment if n not in names]
    if unknown:
        known = ", ".join(list(names)[:8])
        raise PartitionError(f"the partition names op(s) the graph does not have: "
                             f"{', '.join(unknown)} (its ops include {known}; see "
                             f"glow-compile --emit optimized-graph)")
    for name, dev in assignment.items():
        if isinstance(dev, bool) or not isinstance(dev, int) or not 0 <= dev < len(devices):
            raise PartitionError(f"the partition puts %{name} on device {dev!r}; there are "
                                 f"{len(devices)} devices (0 to {len(devices) - 1})")
    if not assignment:
        raise PartitionError("the partition is empty: give at least one op -> device")
    first = min(names[n] for n in assignment)
    current = assignment[g.steps[first].results[0].name_hint]  # type: ignore[index]
    by_device: dict[int, list[int]] = {}
    for i, op in enumerate(g.steps):
        hint = op.results[0].name_hint if op.results else None
        if hint in assignment:
            current = assignment[hint]  # type: ignore[index]
        by_device.setdefault(current, []).append(i)
    return _finish(g, devices, [(steps, d) for d, steps in by_device.items()], "user")


def _check_devices(devices: Sequence[PartDevice]) -> None:
    if not devices:
        raise PartitionError("partitioning needs at least one device, got none")


# ---------------------------------------------------------------------- parts and checks


def _finish(g: _Graph, devices: Sequence[PartDevice],
            groups: Sequence[tuple[list[int], int]], strategy: str) -> PartitionPlan:
    """Measure each group of steps as a part, order them topologically, validate."""
    part_of = {}
    for p, (steps, _) in enumerate(groups):
        for s in steps:
            part_of[s] = p
    parts = [_measure(g, p, steps, dev, devices, part_of) for p, (steps, dev) in enumerate(groups)]
    parts = _topological(parts, devices)
    plan = PartitionPlan(g.fn, devices, parts, strategy)
    validate(plan)
    return plan


def _measure(g: _Graph, index: int, steps: list[int], device: int,
             devices: Sequence[PartDevice], part_of: Mapping[int, int]) -> Part:
    ops = [g.steps[s] for s in steps]
    inside = set(ops)
    consts: dict[SSAValue, None] = {}
    inputs: dict[SSAValue, None] = {}
    outputs: dict[SSAValue, None] = {}
    deps: dict[int, None] = {}
    for op in ops:
        for v in op.operands:
            if _is_constant(v):
                consts[v] = None
            elif v.owner not in inside:
                inputs[v] = None
                s = g.owner_step(v)
                if s is not None:
                    deps[part_of[s]] = None
        for r in op.results:
            if r in g.returned or any(u.operation not in inside for u in r.uses):
                outputs[r] = None
    # the other values it defines, live from their step to their last reader (`_run_area`)
    live = peak = 0
    ends: dict[int, int] = {}
    starts: dict[int, int] = {}
    pos = {op: k for k, op in enumerate(ops)}
    for k, op in enumerate(ops):
        for r in op.results:
            if r in outputs:
                continue
            nbytes = _area_bytes(r)
            last = max((pos[u.operation] for u in r.uses if u.operation in pos), default=k)
            if g.born(r) > g.index[op]:  # in place: its operand's bytes until that ends
                if last > k:
                    starts[k + 1] = starts.get(k + 1, 0) + nbytes
                    ends[last] = ends.get(last, 0) + nbytes
                continue
            live += nbytes
            ends[last] = ends.get(last, 0) + nbytes
        peak = max(peak, live)
        live -= ends.pop(k, 0)
        live += starts.pop(k + 1, 0)
    output_bytes = sum(_area_bytes(v) for v in outputs)
    dev = devices[device] if 0 <= device < len(devices) else None
    const_ops = [v.owner for v in consts if isinstance(v.owner, Operation)]
    return Part(
        index=index, device=device, ops=ops,
        constants=list(dict.fromkeys(const_ops)),
        inputs=list(inputs), outputs=list(outputs),
        weight_bytes=g.constant_bytes((op, k, v) for op in ops for k, v in enumerate(op.operands)),
        input_bytes=sum(_area_bytes(v) for v in inputs),
        activation_bytes=_run_area(0, output_bytes, peak),
        cost=sum(dev.cost(op) for op in ops) if dev is not None else 0.0,
        deps=sorted(deps))


def _topological(parts: list[Part], devices: Sequence[PartDevice]) -> list[Part]:
    """Parts renumbered in a topological order; a cycle is a PartitionError naming it."""
    state: dict[int, int] = {}  # 1: on the path, 2: done
    order: list[int] = []
    path: list[int] = []

    def visit(p: int) -> None:
        state[p] = 1
        path.append(p)
        for d in parts[p].deps:
            if d == p:
                continue
            if state.get(d) == 1:
                cycle = path[path.index(d):] + [d]
                shown = " -> ".join(f"part {c} (device {parts[c].device})" for c in cycle)
                raise PartitionError(f"the partition has a cycle: {shown} (each reads "
                                     f"what the next computes); move ops so that data "
                                     f"flows one way between devices")
            if d not in state:
                visit(d)
        path.pop()
        state[p] = 2
        order.append(p)

    for p in range(len(parts)):
        if p not in state:
            visit(p)
    renumber = {old: new for new, old in enumerate(order)}
    out = []
    for old in order:
        part = parts[old]
        part.index = renumber[old]
        part.deps = sorted(renumber[d] for d in part.deps if d != old)
        out.append(part)
    return out


def validate(plan: PartitionPlan) -> None:
    """The checks every plan passes (module docstring); a PartitionError otherwise."""
    devices = plan.devices
    for p in plan.parts:
        if not 0 <= p.device < len(devices):
            raise PartitionError(f"part {p.index} is on device {p.device}; there are "
                                 f"{len(devices)} devices (0 to {len(devices) - 1})")
        dev = devices[p.device]
        bad = [op for op in p.ops if not dev.runs(op)]
        if bad:
            shown = ", ".join(op_label(op) for op in bad[:5])
            raise PartitionError(f"part {p.index} is on device {p.device} ({dev.kind}), "
                                 f"which does not run {len(bad)} of its op(s): {shown}")
    for d, nbytes in sorted(plan.device_bytes().items()):
        have = devices[d].memory_bytes
        if nbytes > have:
            on = [p.index for p in plan.parts if p.device == d]
            raise PartitionError(f"device {d} ({devices[d].kind}) holds part(s) "
                                 f"{', '.join(map(str, on))}, which need {fmt_bytes(nbytes)}; "
                                 f"it has {fmt_bytes(have)} ({nbytes - have:,} bytes too many)")
    for p in plan.parts:
        if any(d >= p.index for d in p.deps):
            raise PartitionError(f"part {p.index} reads part(s) after it: the DAG is not "
                                 f"in topological order")


__all__ = ["Part", "PartDevice", "PartitionError", "PartitionPlan", "device_footprint", "fmt_bytes",
           "memory_plan", "op_label", "user_plan", "validate"]
