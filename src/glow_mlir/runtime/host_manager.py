"""`HostManager`: networks across devices, a bounded priority queue of requests, and the
executor that walks each request through its network's DAG (Glow's HostManager, Executor
and Provisioner; README: The runtime).

- `add_network(name, model, partition=...)` partitions and compiles the model
  (`runtime/partitioned.py`), places each part on its device (`DeviceManager.add_network`,
  memory accounted; the emptiest devices are taken first) and, with `replicate=True`,
  adds copies of the whole network on devices it leaves idle (Glow's saturateHost): each
  request then goes to the copy with the fewest requests in flight.
- `run_network(name, inputs, callback=None, priority=0)` returns a future of the outputs
  (in the model's output order). Lower priority numbers start first, first come first
  served among equals. At most `max_active_requests` run at once; a request arriving when
  `max_queue_size` requests are already queued or running is refused at once
  (`RequestRefused`), never left waiting. `callback(outputs, error)` is called exactly
  once, from a runtime thread; one that raises is logged in one line (logger
  `glow_mlir.runtime`) and the runtime goes on.
- The executor starts every part whose inputs are ready, moves each part's outputs to the
  inputs of the same names of the parts that read them, and runs independent parts on
  their devices at the same time.

`backend="ray"` runs each device manager as a Ray actor (`runtime/ray_devices.py`); the
rest is the same.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import InputError, as_array
from glow_mlir.runtime.device_manager import (
    DeviceManager,
    DeviceMemoryError,
    LoadedPart,
    NetworkNotFound,
    check_name,
)
from glow_mlir.runtime.devices import Device
from glow_mlir.runtime.partitioned import Partition

if TYPE_CHECKING:
    from glow_mlir.transforms.partition import PartitionDag, PartitionPlan

Callback = Callable[[list[np.ndarray] | None, BaseException | None], None]
BACKENDS = ("local", "ray")
_log = logging.getLogger("glow_mlir.runtime")
MEMORY_RETRIES = 2
"""Plans tried again, with less room, when a compiled part does not fit its device."""


class RequestRefused(UserError, RuntimeError):
    """A request the host cannot take now (its queue is full); retry later."""


class HostError(UserError):
    """A host manager used wrongly (a network name taken or in use, bad limits)."""


def _refuse_state(name: str, module: Any) -> None:
    """A model with state (a training step: weights each run updates) keeps it in one
    compiled model; split over devices, its weights would become inputs to give."""
    from xdsl.dialects import func

    from glow_mlir.conversion.lower_to_instr import placeholder_names, state_values

    for fn in [o for o in module.ops if isinstance(o, func.FuncOp)]:
        states = state_values(fn)
        if states:
            names = placeholder_names(fn.arg_attrs, len(fn.function_type.inputs.data),
                                      "input")
            state = ", ".join(names[i] for i in states)
            raise HostError(f"network '{name}': a model with state ({state}: "
                            f"mutable weights a run updates) cannot run on the runtime's "
                            f"devices: run it with glow_mlir.compile or train it with "
                            f"glow_mlir.train")


def _refuse_bounded(name: str, module: Any) -> None:
    """Outputs whose length is known only at run time (NonZero, NonMaxSuppression: a
    buffer of the bound and a count, ir/bounded_outputs.py) are trimmed by
    `CompiledModel`; the runtime's parts pass whole buffers and no counts, so each
    request of such a network failed with an internal error. Refused when added."""
    from xdsl.dialects import func

    from glow_mlir.conversion.lower_to_instr import placeholder_names
    from glow_mlir.ir.bounded_outputs import bounded_outputs

    for fn in [o for o in module.ops if isinstance(o, func.FuncOp)]:
        names = placeholder_names(fn.res_attrs, len(fn.function_type.outputs.data), "output")
        trimmed = [names[i] for i, _, _ in bounded_outputs(names)]
        if trimmed:
            raise HostError(f"network '{name}': output(s) {', '.join(trimmed)} have a length "
                            f"known only at run time (NonZero, NonMaxSuppression, ...), which "
                            f"the runtime's devices do not trim: run it with "
                            f"glow_mlir.compile")


@dataclass
class Network:
    """A network on the host: its DAG, and each copy's device per part."""

    name: str
    # the plan and the DAG hold the graph's ops and modules: their reprs print the IR
    plan: PartitionPlan = field(repr=False)
    dag: PartitionDag = field(repr=False)
    replicas: list[list[int]]
    """Device index of each part, per copy (copy 0 is the partitioner's placement)."""
    input_shapes: dict[str, tuple[int, ...]]
    input_dtypes: dict[str, np.dtype]
    in_flight: list[int] = field(default_factory=list)
    requests: int = 0
    """Requests queued or running."""

    def part_key(self, part: int) -> str:
        return f"{self.name}#{part}"


@dataclass(order=True)
class _Request:
    priority: int
    seq: int
    network: Network = field(compare=False)
    inputs: dict[str, np.ndarray] = field(compare=False)
    future: Future = field(compare=False)
    callback: Callback | None = field(compare=False, default=None)


def _whole(value: object) -> bool:
    """An int or a numpy integer, not a bool (a whole number given by mistake)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_partition(partition: Partition) -> Partition:
    """A partition dict's names and device indices checked (their range and the ops they
    name are the partitioner's to check); numpy integers taken as ints."""
    if not isinstance(partition, Mapping):
        return partition
    for op, device in partition.items():
        if not isinstance(op, str) or not op:
            raise HostError(f"partition: an op name must be a non-empty string, got {op!r}")
        if not _whole(device):
            raise HostError(f"partition: op '{op}' -> {device!r}: the device index must be "
                            f"an int")
    return {op: int(device) for op, device in partition.items()}


def _check_callback(callback: object) -> None:
    """Refused at `run_network`, not when it is called on a runtime thread."""
    if callback is None:
        return
    if not callable(callback):
        raise HostError(f"callback must be callable as callback(outputs, error), got "
                        f"{type(callback).__name__}")
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):  # a builtin without a signature: taken on trust
        return
    try:
        signature.bind(None, None)
    except TypeError:
        raise HostError(f"callback must take two arguments (outputs, error); "
                        f"{getattr(callback, '__name__', type(callback).__name__)}"
                        f"{signature} does not") from None


def _check_limit(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HostError(f"{name} must be a whole number >= 1, got {value!r}")
    return value


class HostManager:
    """Devices, networks and the request queue (module docstring)."""

    def __init__(self, devices: Sequence[Device], max_queue_size: int = 100,
                 max_active_requests: int = 10, backend: str = "local",
                 **backend_options: Any):
        if not devices:
            raise HostError("a HostManager needs at least one Device")
        for d in devices:
            if not isinstance(d, Device):
                raise HostError(f"devices must be Device objects, got {type(d).__name__}")
        if backend not in BACKENDS:
            raise HostError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.devices = list(devices)
        self.max_queue_size = _check_limit("max_queue_size", max_queue_size)
        self.max_active_requests = _check_limit("max_active_requests", max_active_requests)
        self.backend = backend
        self.managers: list[Any]
        if backend == "ray":
            from glow_mlir.runtime.ray_devices import ray_device_managers

            takes = list(inspect.signature(ray_device_managers).parameters)[1:]
            unknown = [o for o in backend_options if o not in takes]
            if unknown:
                raise HostError(f"backend 'ray' takes options {', '.join(takes)}; got "
                                f"{', '.join(unknown)}")
            self.managers = ray_device_managers(self.devices, **backend_options)
        else:
            if backend_options:
                raise HostError(f"backend 'local' takes no options, got "
                                f"{', '.join(backend_options)}")
            self.managers = [DeviceManager(d, i) for i, d in enumerate(self.devices)]
        self._networks: dict[str, Network] = {}
        self._lock = threading.Lock()
        self._queue: list[_Request] = []
        self._seq = itertools.count()
        self._active = 0
        self._held = 0
        self._stopped = False
        self.started: list[int] = []
        """The `seq` of each request in the order it started (for tests and tools)."""

    # ------------------------------------------------------------------ networks
    def add_network(self, name: str, model: Any, partition: Partition = "memory",
                    input_shapes: Mapping[str, Sequence[int] | int] | None = None,
                    replicate: bool = False) -> Network:
        """Partition, compile and place `model` (an ONNX model or a glow graph, as
        `glow_mlir.compile` takes) under `name` (module docstring)."""
        from glow_mlir.runtime.partitioned import optimized_graph, plan
        from glow_mlir.transforms.partition import split

        self._check_running()
        check_name(name, "a network's name")
        if not isinstance(replicate, (bool, np.bool_)):
            raise HostError(f"replicate must be True or False, got {replicate!r}")
        partition = _check_partition(partition)
        with self._lock:
            if name in self._networks:
                raise HostError(f"a network named '{name}' is already added")
        module = optimized_graph(model, self.devices, input_shapes)
        _refuse_state(name, module)
        _refuse_bounded(name, module)
        # the emptiest devices of each kind first (Glow's provisioner), so networks spread
        # out; the kinds keep their order (the heterogeneous partitioner's priority)
        rank = {k: r for r, k in enumerate(dict.fromkeys(d.kind for d in self.devices))}
        # a device lost for good (a Ray actor that is not restarted) takes no new part
        order = sorted((i for i in range(len(self.devices))
                        if not getattr(self.managers[i], "gone", False)),
                       key=lambda i: (rank[self.devices[i].kind], self.managers[i].used_bytes, i))
        if not order and not isinstance(partition, Mapping):
            raise HostError(f"every device is lost for good (its actor died and "
                            f"max_restarts=0): network '{name}' has nowhere to go")
        budget = [1.0] * len(self.devices)
        refused: DeviceMemoryError | None = None
        for attempt in range(MEMORY_RETRIES + 1):
            # each device's free bytes; the partitioner estimates a part's bytes, and the
            # compiled part's memory plan may need a little more (an arena its buffers'
            # lifetimes fragment above their peak): then plan again with less room
            # (`_shrink`) on every device like the one that refused it
            devices = [replace(d, memory_bytes=max(1, int(
                (d.memory_bytes - self.managers[i].used_bytes) * budget[i])))
                for i, d in enumerate(self.devices)]
            try:
                the_plan = plan(module, devices, partition, order)
            except UserError:
                if refused is None:
                    raise
                raise refused from None  # the room shrunk below an op: what was refused
            the_plan.devices = self.devices
            dag = split(the_plan)
            placement = [p.device for p in dag.parts]
            network = Network(name, the_plan, dag, [placement], {}, {})
            try:
                compiled = self._load(network, placement, None)
                break
            except DeviceMemoryError as err:
                if attempt == MEMORY_RETRIES or isinstance(partition, Mapping):
                    raise
                refused = err
                self._shrink(budget, err, the_plan.device_bytes() if attempt else {})
        if replicate:
            for extra in self._spare_placements(placement):
                try:
                    self._load(network, extra, compiled)
                except UserError:
                    break
                network.replicas.append(extra)
        network.in_flight = [0] * len(network.replicas)
        self._signature(network, compiled)
        with self._lock:
            if name in self._networks:
                self._evict(network)
                raise HostError(f"a network named '{name}' is already added")
            self._networks[name] = network
        return network

    def _shrink(self, budget: list[float], err: DeviceMemoryError,
                estimates: Mapping[int, int]) -> None:
        """Less room for the next plan after device `err.device` refused a part, on every
        device of the same kind and free bytes (with equal devices, shrinking only the one
        that refused moved the whole part to the next and never split it): by the bytes
        it was short of (an arena a few bytes over its estimate), or, given the plan's
        `estimates` (the second refusal), by the share the estimate for that device fell
        short of the compiled bytes, so that the part no longer fits and is cut smaller."""
        dev = err.device
        if not 0 <= dev < len(budget):  # unknown device: every one
            for i in range(len(budget)):
                budget[i] *= 0.9
            return
        estimate = estimates.get(dev, 0)
        ratio = (estimate / err.needed if 0 < estimate < err.needed else
                 err.free / err.needed if err.needed else 0.9)
        free = [d.memory_bytes - m.used_bytes for d, m in zip(self.devices, self.managers)]
        less = budget[dev] * min(0.98, ratio * 0.99)
        for i, d in enumerate(self.devices):
            if d.kind == self.devices[dev].kind and free[i] == free[dev]:
                budget[i] = min(budget[i], less)

    def _load(self, network: Network, placement: list[int],
              compiled: list[LoadedPart] | None) -> list[LoadedPart]:
        """Put each part on its device (compiled here, or on a Ray actor); undone on
        failure."""
        done: list[int] = []
        out: list[LoadedPart] = []
        try:
            for p, sub in enumerate(network.dag.parts):
                dev = placement[p]
                out.append(self.managers[dev].load(
                    network.part_key(p), sub.module, compiled[p] if compiled else None))
                done.append(p)
        except BaseException:
            for p in done:
                self.managers[placement[p]].release(network.part_key(p))
            raise
        return out

    def _spare_placements(self, placement: list[int]) -> Iterator[list[int]]:
        """Placements of further copies on devices no copy uses, a device of the same
        kind and backend for each part."""
        used = set(placement)
        while True:
            extra = []
            for dev in placement:
                want = self.devices[dev]
                free = next((i for i, d in enumerate(self.devices) if i not in used
                             and i not in extra and d.kind == want.kind
                             and d.backend == want.backend), None)
                if free is None:
                    return
                extra.append(free)
            used.update(extra)
            yield extra

    def _signature(self, network: Network, loaded: list[LoadedPart]) -> None:
        for name in network.dag.input_names:
            for sub, part in zip(network.dag.parts, loaded):
                if name in sub.input_names:
                    network.input_shapes[name] = tuple(part.input_shapes[name])
                    network.input_dtypes[name] = np.dtype(part.input_dtypes[name])
                    break

    def remove_network(self, name: str) -> None:
        """Evict the network from its devices; refused while requests for it are queued
        or running."""
        with self._lock:
            network = self._network(name)
            if network.requests:
                raise HostError(f"network '{name}' has {network.requests} request(s) queued "
                                f"or running; remove it when they are done")
            del self._networks[name]
        self._evict(network)

    def _evict(self, network: Network) -> None:
        for placement in network.replicas:
            for p, dev in enumerate(placement):
                try:
                    self.managers[dev].release(network.part_key(p))
                except Exception:  # noqa: BLE001 - a device that is gone (a dead actor)
                    pass

    def networks(self) -> list[str]:
        with self._lock:
            return list(self._networks)

    def network(self, name: str) -> Network:
        with self._lock:
            return self._network(name)

    def _network(self, name: str) -> Network:
        if not isinstance(name, str):
            raise HostError(f"a network's name is a string, got {type(name).__name__} "
                            f"{name!r}")
        network = self._networks.get(name)
        if network is None:
            known = ", ".join(self._networks) or "none"
            raise NetworkNotFound(f"no network named '{name}' (networks: {known})")
        return network

    # ------------------------------------------------------------------ requests
    def run_network(self, name: str, inputs: Mapping[str, object],
                    callback: Callback | None = None, priority: int = 0
                    ) -> Future[list[np.ndarray]]:
        """Queue a request (module docstring): a future of the outputs."""
        if not _whole(priority):
            raise HostError(f"priority must be a whole number, got {priority!r}")
        priority = int(priority)
        _check_callback(callback)
        self._check_running()
        with self._lock:
            network = self._network(name)
        arrays = _check_inputs(network, inputs)
        future: Future[list[np.ndarray]] = Future()
        with self._lock:
            waiting = len(self._queue)
            if waiting + self._active >= self.max_queue_size:
                raise RequestRefused(
                    f"request for '{name}' refused: {waiting} queued and {self._active} "
                    f"running requests reach max_queue_size={self.max_queue_size}; retry "
                    f"later or make the queue longer")
            network.requests += 1
            heapq.heappush(self._queue, _Request(priority, next(self._seq), network,
                                                 arrays, future, callback))
            startable = self._take_startable()
        for req in startable:
            self._start(req)
        return future

    def run(self, name: str, inputs: Mapping[str, object], priority: int = 0
            ) -> list[np.ndarray]:
        """`run_network` and wait: the outputs, or the request's error raised."""
        return self.run_network(name, inputs, priority=priority).result()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Requests queue but none starts until the block ends; then they start in
        priority order (to admit a batch as one)."""
        with self._lock:
            self._held += 1
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1
                startable = self._take_startable()
            for req in startable:
                self._start(req)

    @property
    def queued(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def active(self) -> int:
        with self._lock:
            return self._active

    def _take_startable(self) -> list[_Request]:
        """Requests to start now, best first (called with the lock held)."""
        out = []
        while not self._held and self._queue and self._active < self.max_active_requests:
            req = heapq.heappop(self._queue)
            self._active += 1
            self.started.append(req.seq)
            out.append(req)
        return out

    # ------------------------------------------------------------------ the executor
    def _start(self, req: _Request) -> None:
        network = req.network
        with self._lock:
            copy = min(range(len(network.replicas)), key=network.in_flight.__getitem__)
            network.in_flight[copy] += 1
        _Run(self, req, copy).start()

    def _finished(self, req: _Request, copy: int, outputs: list[np.ndarray] | None,
                  error: BaseException | None) -> None:
        with self._lock:
            self._active -= 1
            req.network.in_flight[copy] -= 1
            req.network.requests -= 1
            startable = self._take_startable()
        if error is None:
            req.future.set_result(outputs)  # type: ignore[arg-type]
        else:
            req.future.set_exception(error)
        if req.callback is not None:
            try:
                req.callback(outputs, error)
            except Exception as err:  # noqa: BLE001 - a caller's bug must not stop the runtime
                _log.error("the callback of request %d for network '%s' raised %s: %s",
                           req.seq, req.network.name, type(err).__name__,
                           " ".join(str(err).split("\n")))  # one line in the log
        for nxt in startable:
            self._start(nxt)

    def stop(self) -> None:
        """Stop the device workers (after what they were given); Ray actors are killed.
        A stopped host refuses new networks and requests."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        for m in self.managers:
            m.stop()

    def _check_running(self) -> None:
        """Refused at once (not a future holding the error, nor a lost device's)."""
        if self._stopped:
            raise HostError("the host is stopped (stop() was called or its with-block "
                            "ended): make a new HostManager")

    def __enter__(self) -> HostManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Run:
    """One request walking its network's DAG on one copy."""

    def __init__(self, host: HostManager, req: _Request, copy: int):
        self.host, self.req, self.copy = host, req, copy
        dag = req.network.dag
        self.placement = req.network.replicas[copy]
        self.values: dict[str, Any] = dict(req.inputs)
        self.waiting = [len(p.deps) for p in dag.parts]
        self.readers: list[list[int]] = [[] for _ in dag.parts]
        for p in dag.parts:
            for d in p.deps:
                self.readers[d].append(p.index)
        self.left = len(dag.parts)
        self.failed = False
        self.lock = threading.Lock()

    def start(self) -> None:
        ready = [p.index for p in self.req.network.dag.parts if not p.deps]
        if not ready:  # a model with no ops: its outputs are its inputs
            self._done()
        for p in ready:
            self._submit(p)

    def _submit(self, p: int) -> None:
        network = self.req.network
        sub = network.dag.parts[p]
        manager = self.host.managers[self.placement[p]]
        try:
            with self.lock:
                inputs = {n: self.values[n] for n in sub.input_names}
            fut = manager.run_function(network.part_key(p), inputs)
        except BaseException as err:  # a device that is gone
            self._fail(err)
            return
        fut.add_done_callback(lambda f: self._part_done(p, f))

    def _part_done(self, p: int, fut: Future) -> None:
        error = fut.exception()
        if error is not None:
            self._fail(error)
            return
        ready = []
        with self.lock:
            if self.failed:
                return
            self.values.update(fut.result())
            self.left -= 1
            for r in self.readers[p]:
                self.waiting[r] -= 1
                if self.waiting[r] == 0:
                    ready.append(r)
            done = self.left == 0
        for r in ready:
            self._submit(r)
        if done:
            self._done()

    def _done(self) -> None:
        try:
            outputs = [np.asarray(self.values[n]) for n in self.req.network.dag.output_names]
        except KeyError as err:
            self._fail(RuntimeError(f"output {err} was computed by no part"))
            return
        self.host._finished(self.req, self.copy, outputs, None)

    def _fail(self, error: BaseException) -> None:
        with self.lock:
            if self.failed:
                return
            self.failed = True
        self.host._finished(self.req, self.copy, None, error)


def _check_inputs(network: Network, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
    """The inputs as arrays, or one InputError listing every problem (as
    `CompiledModel.check_inputs`)."""
    if not isinstance(inputs, Mapping):
        raise InputError(f"inputs must be a dict of name -> array, got {type(inputs).__name__}")
    problems = [f"unknown input '{n}' (the network's inputs: "
                f"{', '.join(network.dag.input_names)})"
                for n in inputs if n not in network.input_shapes]
    arrays = {}
    for name, shape in network.input_shapes.items():
        dtype = network.input_dtypes[name]
        if name not in inputs:
            problems.append(f"missing input '{name}' (shape {shape}, dtype {dtype})")
            continue
        x = as_array(inputs[name])
        if x.shape != shape or x.dtype != dtype:
            problems.append(f"input '{name}' has shape {x.shape}, dtype {x.dtype}; expected "
                            f"shape {shape}, dtype {dtype}")
        arrays[name] = x
    if problems:
        raise InputError("; ".join(problems))
    return arrays


__all__ = ["Callback", "HostError", "HostManager", "Network", "RequestRefused"]
