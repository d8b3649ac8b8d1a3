"""`DeviceManager`: one device's networks, memory and worker (Glow's DeviceManager).

Networks (compiled parts) are added and evicted by name; the bytes each one holds (its
compiled `MemoryReport`) are accounted, and a network that does not fit what is left is
refused with the bytes needed and available. `run_function` queues a run on the device's
own worker thread and returns a future: one device runs one function at a time, as a card
does, and different devices run at once.

Because one function runs at a time, the networks on a device share one run area: the
device holds every network's constants, and the largest of their run areas (input and
output placeholders, filled from the host when a run starts and read back when it ends,
and the activation arena), not their sum (`network_footprint`, the partitioner's
`device_footprint`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.devices import Device, article
from glow_mlir.transforms.partition.plan import device_footprint

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from glow_mlir.runtime.compiled_model import CompiledModel


class DeviceMemoryError(UserError):
    """A network that does not fit the memory left on its device: `needed` and `free`
    bytes (0 when unknown), and the device's index (-1 when unknown)."""

    def __init__(self, message: str, needed: int = 0, free: int = 0, device: int = -1):
        super().__init__(message)
        self.needed, self.free, self.device = needed, free, device


class NetworkNotFound(UserError, KeyError):
    """A name no network was added under."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def check_name(name: object, what: str) -> None:
    """Network names are non-empty strings, not only spaces (they key dicts, name parts
    `name#i` and are printed in messages)."""
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{what} must be a non-empty string (not only spaces), got {name!r}")


def network_bytes(model: CompiledModel) -> int:
    """The bytes a compiled network holds on its device (its planned memory regions; the
    inputs' and outputs' sizes when the backend plans none)."""
    return sum(network_footprint(model))


def network_footprint(model: CompiledModel) -> tuple[int, int]:
    """(bytes the network keeps, bytes of its run area) on its device: its constants, and
    its placeholders and activation arena, which it uses only while it runs (module
    docstring). The graphs the runtime runs have no state (mutable weights), so their
    placeholders are all inputs and outputs."""
    m = model.memory
    if m is not None:
        return int(m.constant_bytes), int(m.mutable_bytes + m.activations_bytes)
    sizes = [*model.input_shapes.values(), *model.output_shapes.values()]
    return 0, sum(int(np.prod(s)) * 4 for s in sizes)


@dataclass
class LoadedPart:
    """A part on a device: its compiled model (None on a Ray actor) and input signature."""

    model: CompiledModel | None
    input_shapes: dict[str, tuple[int, ...]]
    input_dtypes: dict[str, str]


def replica_of(model: CompiledModel | None) -> CompiledModel:
    """A compiled part for another device of the same kind: the cpu's native code runs
    calls in parallel, so it is shared; the interpreter and the simulator hold one arena,
    so each device gets an executor of its own over the same lowered program."""
    from glow_mlir.backends import get_backend
    from glow_mlir.runtime.compiled_model import CompiledModel

    assert model is not None and model.module is not None
    if model.backend == "cpu":
        return model
    executor = get_backend(model.backend).executor(model.module, model.memory)  # type: ignore[arg-type]
    return CompiledModel(model.module, model.backend, executor=executor)


class DeviceManager:
    """One device (module docstring); `index` is its place in the host's device list."""

    def __init__(self, device: Device, index: int = 0):
        if not isinstance(device, Device):
            raise UserError(f"DeviceManager takes a Device (glow_mlir.runtime.Device(...)), "
                            f"got {type(device).__name__} {device!r}")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise UserError(f"DeviceManager: index must be a whole number >= 0, got "
                            f"{index!r}")
        self.device = device
        self.index = index
        self._networks: dict[str, tuple[CompiledModel, tuple[int, int]]] = {}
        self._placed: set[str] = set()
        """The networks a host placed (`load`): `evict_network` refuses them."""
        self._lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1,
                                          thread_name_prefix=f"glow-device-{index}")
        self.runs = 0
        """Functions run so far (replication spreads them)."""

    # ------------------------------------------------------------------ memory
    @property
    def used_bytes(self) -> int:
        """Every network's constants and the largest run area (module docstring)."""
        with self._lock:
            return device_footprint(n for _, n in self._networks.values())

    @property
    def free_bytes(self) -> int:
        return self.device.memory_bytes - self.used_bytes

    def networks(self) -> list[str]:
        with self._lock:
            return list(self._networks)

    def add_network(self, name: str, model: CompiledModel) -> None:
        """Hold `model` under `name`; refused when the name is taken, the model is not
        compiled for a backend of the device's kind, or it does not fit."""
        from glow_mlir.runtime.compiled_model import CompiledModel
        from glow_mlir.runtime.devices import KINDS

        check_name(name, f"device {self.index}: a network's name")
        if not isinstance(model, CompiledModel):
            raise UserError(f"device {self.index}: add_network expects a CompiledModel "
                            f"(glow_mlir.compile(...)), got {type(model).__name__}")
        runs = KINDS[self.device.kind]
        if model.backend not in runs:
            kind = self.device.kind
            raise UserError(f"device {self.index}: network '{name}' is compiled for backend "
                            f"'{model.backend}'; {article(kind)} '{kind}' device runs "
                            f"{' or '.join(runs)}")
        held = network_footprint(model)
        with self._lock:
            if name in self._networks:
                raise UserError(f"device {self.index} already holds a network '{name}'")
            used = device_footprint(n for _, n in self._networks.values())
            need = device_footprint([*(n for _, n in self._networks.values()), held]) - used
            free = self.device.memory_bytes - used
            if need > free:
                raise DeviceMemoryError(
                    f"network '{name}' needs {need:,} more bytes on "
                    f"{self.device.label(self.index)} (constants {held[0]:,}, run area "
                    f"{held[1]:,} shared with its other networks); {free:,} of its "
                    f"{self.device.memory_bytes:,} bytes are free", need, free, self.index)
            self._networks[name] = (model, held)

    def evict_network(self, name: str) -> None:
        """Evict a network added with `add_network`; a part a `HostManager` placed
        (`load`) is refused: its host would send requests to it (remove the whole
        network with `host.remove_network`)."""
        with self._lock:
            if name in self._placed:
                network = name.rpartition("#")[0] or name
                raise UserError(f"device {self.index}: '{name}' is a part a HostManager "
                                f"placed; remove its network with "
                                f"host.remove_network('{network}')")
        self.release(name)

    def release(self, name: str) -> None:
        """Evict `name`, placed or not (the host's own eviction)."""
        with self._lock:
            self._placed.discard(name)
            if self._networks.pop(name, None) is None:
                raise NetworkNotFound(f"device {self.index} holds no network '{name}'")

    def network(self, name: str) -> CompiledModel:
        with self._lock:
            entry = self._networks.get(name)
        if entry is None:
            raise NetworkNotFound(f"device {self.index} holds no network '{name}'")
        return entry[0]

    def load(self, name: str, module: ModuleOp, like: LoadedPart | None = None) -> LoadedPart:
        """Compile `module` (a part's graph) for this device and add it as `name`; with
        `like` (the same part loaded on another device of this kind), a copy of that
        compiled part with an executor of its own instead (a simulator per device)."""
        from glow_mlir.ir.text import verify_module
        from glow_mlir.runtime.compiled_model import CompiledModel

        if like is not None:
            model = replica_of(like.model)
        else:
            verify_module(module)
            model = CompiledModel(module, self.device.backend,
                                  backend_options=self.device.backend_options)
        self.add_network(name, model)
        with self._lock:
            self._placed.add(name)
        return LoadedPart(model, dict(model.input_shapes),
                          {n: str(d) for n, d in model.input_dtypes.items()})

    # ------------------------------------------------------------------ running
    def run_function(self, name: str, inputs: Mapping[str, np.ndarray]
                     ) -> Future[dict[str, np.ndarray]]:
        """Run network `name` on the device's worker: a future of its outputs by name."""
        model = self.network(name)

        def run() -> dict[str, np.ndarray]:
            self.runs += 1
            return dict(zip(model.output_names, model.run(inputs)))

        return self._worker.submit(run)

    def stop(self) -> None:
        """Finish what is queued and end the worker."""
        self._worker.shutdown(wait=True)

    def __repr__(self) -> str:
        return f"<DeviceManager {self.index}: {self.device.describe()}, {self.networks()}>"


__all__ = ["DeviceManager", "DeviceMemoryError", "LoadedPart", "NetworkNotFound", "network_bytes",
           "network_footprint"]
