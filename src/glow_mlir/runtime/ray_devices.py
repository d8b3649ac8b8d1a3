"""Device managers as Ray actors: `HostManager(devices, backend="ray")` (README: The
runtime, "Beyond one machine").

Each device is one actor holding a `DeviceManager`. A part is shipped to its actor once,
as its graph's text with the weights in it (`dialect_resources`), and compiled there, on
the actor's node, for the device's backend. A request's part is one actor call; its
inputs go with the call and its outputs come back to the host, which hands them to the
next part (plain actor calls: Ray's compiled graphs fix one DAG per graph and this host
walks a different DAG per network and copy; the per-stage overhead is measured by
benchmarks/runtime.py). An actor that dies fails the calls it had and any later call to
it; requests on other actors go on.

`ray.init` is called when Ray is not yet initialized: with `address=` (or the
`RAY_ADDRESS` variable) it joins that cluster, else it starts a local one. Actors ask for
`num_cpus=0` by default, so a small machine can hold one per device; give
`num_cpus_per_device=1` (and `resources=`) to place them on a real cluster's nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.device_manager import LoadedPart
from glow_mlir.runtime.devices import Device


class RayMissing(UserError):
    """backend="ray" without the ray package."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissing("backend 'ray' needs the ray package: pip install 'glow-mlir[ray]' "
                         "(or pip install ray)") from None
    return ray


class DeviceActor:
    """The body of one device's actor: a `DeviceManager` in the actor's process."""

    def __init__(self, device: Device, index: int):
        import glow_mlir.backends  # noqa: F401 - the graph passes' backend lookup
        from glow_mlir.runtime.device_manager import DeviceManager

        self.manager = DeviceManager(device, index)

    def load(self, name: str, text: str) -> tuple[dict, dict, int]:
        from glow_mlir.dialects.context import make_context
        from glow_mlir.ir.text import parse_module
        from glow_mlir.runtime.device_manager import network_bytes

        module = parse_module(make_context(), text, f"<{name}>")
        part = self.manager.load(name, module)
        assert part.model is not None
        return part.input_shapes, part.input_dtypes, network_bytes(part.model)

    def evict(self, name: str) -> None:
        self.manager.evict_network(name)

    def run(self, name: str, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        model = self.manager.network(name)
        self.manager.runs += 1
        return dict(zip(model.output_names, model.run(dict(inputs))))

    def runs(self) -> int:
        return self.manager.runs

    def pid(self) -> int:
        import os

        return os.getpid()


class RayDeviceManager:
    """The host's side of one device actor, with `DeviceManager`'s methods."""

    def __init__(self, actor: Any, device: Device, index: int):
        self.actor, self.device, self.index = actor, device, index
        self._bytes: dict[str, int] = {}

    @property
    def used_bytes(self) -> int:
        return sum(self._bytes.values())

    def networks(self) -> list[str]:
        return list(self._bytes)

    def load(self, name: str, module: Any, like: LoadedPart | None = None) -> LoadedPart:
        """Ship the part's graph (weights included) and compile it on the actor."""
        from glow_mlir.runtime.device_manager import DeviceMemoryError

        ray = _ray()
        try:
            shapes, dtypes, nbytes = ray.get(self.actor.load.remote(name, str(module)))
        except ray.exceptions.RayTaskError as err:
            cause = err.as_instanceof_cause()
            if isinstance(cause, UserError):
                raise (DeviceMemoryError if isinstance(cause, DeviceMemoryError)
                       else UserError)(str(cause).splitlines()[-1]) from None
            raise
        self._bytes[name] = nbytes
        return LoadedPart(None, shapes, dtypes)

    def evict_network(self, name: str) -> None:
        self._bytes.pop(name, None)
        _ray().get(self.actor.evict.remote(name))

    def run_function(self, name: str, inputs: Mapping[str, np.ndarray]
                     ) -> Future[dict[str, np.ndarray]]:
        return self.actor.run.remote(name, dict(inputs)).future()

    @property
    def runs(self) -> int:
        return int(_ray().get(self.actor.runs.remote()))

    def stop(self) -> None:
        _ray().kill(self.actor)


def ray_device_managers(devices: Sequence[Device], address: str | None = None,
                        num_cpus_per_device: float = 0,
                        resources: Mapping[str, float] | None = None) -> list[RayDeviceManager]:
    """One actor per device (module docstring)."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address)
    remote = ray.remote(DeviceActor).options(num_cpus=num_cpus_per_device,
                                             resources=dict(resources or {}))
    actors = [remote.remote(d, i) for i, d in enumerate(devices)]
    return [RayDeviceManager(a, d, i) for i, (a, d) in enumerate(zip(actors, devices))]


__all__ = ["DeviceActor", "RayDeviceManager", "RayMissing", "ray_device_managers"]
