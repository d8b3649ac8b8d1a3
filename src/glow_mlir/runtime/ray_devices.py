"""Device managers as Ray actors: `HostManager(devices, backend="ray")` (README: The
runtime, "Beyond one machine").

Each device is one actor holding a `DeviceManager`. A part is shipped to its actor once,
as its graph's text with the weights in it (`dialect_resources`), and compiled there, on
the actor's node, for the device's backend. A request's part is one actor call; its
inputs go with the call and its outputs come back to the host, which hands them to the
next part (plain actor calls: Ray's compiled graphs fix one DAG per graph and this host
walks a different DAG per network and copy; the per-stage overhead is measured by
benchmarks/runtime.py).

An actor that dies fails the calls it had with `DeviceLost` (which device, which part;
requests on other actors go on). Ray restarts it (`max_restarts`, 3 by default: a fresh
process with no networks), and the host's side ships its networks to it again before
the next call, waiting at most `restart_timeout_s`; once the restarts are used up, every
call fails with `DeviceLost`. Each actor process has an incarnation id, which every
`load` returns: a load that meets a restarted actor ships the old networks again too,
so a restart noticed by a load (not by a failed run) loses no network. The actor is
threaded (three threads) so it can answer `started()` while a part runs; its parts still
run one at a time, under a lock, as a device's do.

`ray.init` is called when Ray is not yet initialized: with `address=` (or the
`RAY_ADDRESS` variable) it joins that cluster, else it starts a local one. Actors ask for
`num_cpus=0` by default, so a small machine can hold one per device; give
`num_cpus_per_device=1` (and `resources=`) to place them on a real cluster's nodes.
"""

from __future__ import annotations

import threading
import time
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


class DeviceLost(RuntimeError):
    """A device's actor died (or could not be restarted) while it had a request's part."""


class DeviceActor:
    """The body of one device's actor: a `DeviceManager` in the actor's process."""

    def __init__(self, device: Device, index: int):
        import threading
        import uuid

        import glow_mlir.backends  # noqa: F401 - the graph passes' backend lookup
        from glow_mlir.runtime.device_manager import DeviceManager

        self.manager = DeviceManager(device, index)
        self.incarnation = uuid.uuid4().hex
        """This process's id: a restarted actor has a new one."""
        self._running = threading.Lock()
        self._started = 0
        self._texts: dict[str, str] = {}
        """The graph text each network was loaded from (a reship of the same is a no-op)."""

    def load(self, name: str, text: str) -> tuple[dict, dict, tuple[int, int], str]:
        """Compile and hold `text` as `name`; idempotent: the host ships a restarted
        actor's networks again, and a ship whose wait timed out may still have landed.
        Returns the part's signature, its bytes and the actor's incarnation."""
        from glow_mlir.dialects.context import make_context
        from glow_mlir.ir.text import parse_module
        from glow_mlir.runtime.device_manager import network_footprint

        if self._texts.get(name) == text:
            model = self.manager.network(name)
            return (dict(model.input_shapes), {n: str(d) for n, d in model.input_dtypes.items()},
                    network_footprint(model), self.incarnation)
        module = parse_module(make_context(), text, f"<{name}>")
        part = self.manager.load(name, module)
        assert part.model is not None
        self._texts[name] = text
        return (part.input_shapes, part.input_dtypes, network_footprint(part.model),
                self.incarnation)

    def evict(self, name: str) -> None:
        """Evict `name`; a name this process does not hold (a restarted actor) is no
        error: it is gone already."""
        from glow_mlir.runtime.device_manager import NetworkNotFound

        self._texts.pop(name, None)
        try:
            self.manager.release(name)
        except NetworkNotFound:
            pass

    def run(self, name: str, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        model = self.manager.network(name)
        with self._running:  # one part at a time, as a device
            self._started += 1
            self.manager.runs += 1
            return dict(zip(model.output_names, model.run(dict(inputs))))

    def started(self) -> int:
        """Parts this process has started (answered while one runs)."""
        return self._started

    def runs(self) -> int:
        return self.manager.runs

    def pid(self) -> int:
        import os

        return os.getpid()


class RayDeviceManager:
    """The host's side of one device actor, with `DeviceManager`'s methods."""

    def __init__(self, actor: Any, device: Device, index: int, restart_timeout_s: float = 120,
                 max_restarts: int = 3):
        self.actor, self.device, self.index = actor, device, index
        self.restart_timeout_s = restart_timeout_s
        self.max_restarts = max_restarts
        self._incarnation: str | None = None
        """The actor process's id the last load saw (a new one: it was restarted)."""
        self._bytes: dict[str, tuple[int, int]] = {}
        """Each network's (constants, run area) bytes (`network_footprint`)."""
        self._texts: dict[str, str] = {}
        """Each network's graph text, to ship again to a restarted actor."""
        self._lost = False
        self._restore = threading.Lock()
        self.restores = 0
        """Times this device's networks were shipped again to a restarted actor."""

    @property
    def used_bytes(self) -> int:
        from glow_mlir.transforms.partition.plan import device_footprint

        return device_footprint(self._bytes.values())

    def networks(self) -> list[str]:
        return list(self._bytes)

    def load(self, name: str, module: Any, like: LoadedPart | None = None) -> LoadedPart:
        """Ship the part's graph (weights included) and compile it on the actor; an actor
        found restarted gets its other networks again first (module docstring)."""
        text = str(module)
        shapes, dtypes, held, incarnation = self._ship(name, text, None)
        if self._incarnation is not None and incarnation != self._incarnation:
            self._lost = True
        self._incarnation = incarnation
        if self._lost:
            self._restore_networks(name, "load")
        self._bytes[name] = (int(held[0]), int(held[1]))
        self._texts[name] = text
        return LoadedPart(None, shapes, dtypes)

    def _ship(self, name: str, text: str, deadline: float | None) -> tuple:
        """One `load` call on the actor, waiting while Ray restarts it (until `deadline`,
        else `restart_timeout_s`); a dead actor is `DeviceLost`, an error of the part
        (it does not fit, ...) a one-line `UserError`, not Ray's dump."""
        from glow_mlir.runtime.device_manager import DeviceMemoryError

        ray = _ray()
        until = deadline if deadline is not None else (time.monotonic()
                                                       + self.restart_timeout_s)
        died = 0
        while True:
            try:
                timeout = None if deadline is None else max(0.1, deadline - time.monotonic())
                return ray.get(self.actor.load.remote(name, text), timeout=timeout)
            except ray.exceptions.ActorUnavailableError:  # still restarting
                if time.monotonic() > until:
                    raise self._gone(name, "timed out", "load") from None
                time.sleep(0.1)
            except ray.exceptions.RayActorError as err:
                # a call sent just as the process died fails before Ray restarts it: tried
                # again twice (a load is idempotent); an actor dead for good stays so
                died += 1
                if self.max_restarts == 0 or died > 2 or time.monotonic() > until:
                    raise self._gone(name, type(err).__name__, "load") from None
                time.sleep(0.5)
            except ray.exceptions.GetTimeoutError:
                raise self._gone(name, "timed out", "load") from None
            except ray.exceptions.RayTaskError as err:
                cause = err.as_instanceof_cause()
                if isinstance(cause, UserError):
                    message = str(cause).splitlines()[-1]
                    if isinstance(cause, DeviceMemoryError):
                        raise DeviceMemoryError(message, getattr(cause, "needed", 0),
                                                getattr(cause, "free", 0),
                                                getattr(cause, "device", -1)) from None
                    raise UserError(message) from None
                raise

    def evict_network(self, name: str) -> None:
        """Refused: every network on an actor is a part its host placed (as
        `DeviceManager.evict_network`); a name it does not hold is `NetworkNotFound`."""
        from glow_mlir.runtime.device_manager import NetworkNotFound

        if name not in self._texts:
            raise NetworkNotFound(f"device {self.index} holds no network '{name}'")
        network = name.rpartition("#")[0] or name
        raise UserError(f"device {self.index}: '{name}' is a part a HostManager placed; "
                        f"remove its network with host.remove_network('{network}')")

    def release(self, name: str) -> None:
        """Evict `name` from the actor (the host's own eviction)."""
        ray = _ray()
        self._bytes.pop(name, None)
        self._texts.pop(name, None)
        try:
            ray.get(self.actor.evict.remote(name))
        except ray.exceptions.RayActorError:  # a dead or restarting actor holds nothing
            pass

    def run_function(self, name: str, inputs: Mapping[str, np.ndarray]
                     ) -> Future[dict[str, np.ndarray]]:
        """A future of the part's outputs; a lost actor's error is `DeviceLost`."""
        ray = _ray()
        out: Future[dict[str, np.ndarray]] = Future()

        def done(f: Future) -> None:
            err = f.exception()
            if err is None:
                out.set_result(f.result())
            elif isinstance(err, ray.exceptions.RayActorError) or self._restarted(err, name):
                self._lost = True
                lost = DeviceLost(f"{self.device.label(self.index)} was lost "
                                  f"while running '{name}': its actor died; {self._after()}")
                lost.__cause__ = err
                out.set_exception(lost)
            else:
                out.set_exception(err)

        def send() -> None:
            try:
                if self._lost:
                    self._restore_networks(name)
                self.actor.run.remote(name, dict(inputs)).future().add_done_callback(done)
            except BaseException as err:  # noqa: BLE001 - the request's error
                out.set_exception(err)

        if self._lost:
            # the restore waits on the actor: not on the caller's thread, which may be
            # Ray's own (a part's done callback submits the next part) and would then
            # wait for itself until the timeout
            threading.Thread(target=send, name=f"glow-ray-restore-{self.index}",
                             daemon=True).start()
        else:
            send()
        return out

    def _restarted(self, err: BaseException, name: str) -> bool:
        """A restarted actor (Ray noticed the death before the call) does not hold the
        part: the call fails with `NetworkNotFound`, and the device is lost as well."""
        from glow_mlir.runtime.device_manager import NetworkNotFound

        cause = getattr(err, "as_instanceof_cause", None)
        return (cause is not None and name in self._texts
                and isinstance(cause(), NetworkNotFound))

    def _after(self) -> str:
        if self.max_restarts == 0:
            return "it is not restarted (max_restarts=0)"
        return "Ray restarts it and its networks are shipped again before its next call"

    def _restore_networks(self, name: str, doing: str = "run") -> None:
        """Ship every network again to the restarted actor (once, whoever asks first);
        after a timeout the device stays lost and the next call tries again (the actor's
        `load` of a network it already holds is a no-op)."""
        with self._restore:
            if not self._lost:
                return
            deadline = time.monotonic() + self.restart_timeout_s
            for net, text in list(self._texts.items()):
                try:
                    self._incarnation = self._ship(net, text, deadline)[3]
                except DeviceLost as err:
                    raise self._gone(name, str(err).rpartition("(")[2].rstrip(")"),
                                     doing) from None
            self._lost = False
            self.restores += 1

    def _gone(self, name: str, why: str, doing: str = "run") -> DeviceLost:
        if self.max_restarts == 0:
            return DeviceLost(f"{self.device.label(self.index)} is lost: its actor died and "
                              f"is not restarted (max_restarts=0), so it cannot {doing} "
                              f"'{name}'")
        return DeviceLost(f"{self.device.label(self.index)} is lost: its "
                          f"actor could not be restarted to {doing} '{name}' ({why})")

    @property
    def gone(self) -> bool:
        """Lost for good (its actor died and `max_restarts=0`): the host's strategies
        place no new part here."""
        return self._lost and self.max_restarts == 0

    def started(self) -> int:
        """Parts the actor's current process has started."""
        return int(_ray().get(self.actor.started.remote()))

    @property
    def runs(self) -> int:
        return int(_ray().get(self.actor.runs.remote()))

    def stop(self) -> None:
        _ray().kill(self.actor)


RAY_OWN_RESOURCES = ("CPU", "GPU", "memory", "object_store_memory")
"""Resources Ray sets through its own options (`num_cpus_per_device` here; the runtime's
devices are cpu and accel, so it asks for no GPUs)."""


def _number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)) and bool(np.isfinite(value))


def _check_options(address: object, num_cpus_per_device: object, resources: object,
                   max_restarts: object, restart_timeout_s: object) -> None:
    """Each option of `backend="ray"` checked, one line naming it, before `ray.init`."""
    if address is not None and not isinstance(address, str):
        raise UserError(f"address must be a Ray address string (e.g. 'ray://head:10001'), "
                        f"got {address!r}")
    if not _number(num_cpus_per_device) or num_cpus_per_device < 0:  # type: ignore[operator]
        raise UserError(f"num_cpus_per_device must be a number >= 0, got "
                        f"{num_cpus_per_device!r}")
    if resources is not None:
        if not isinstance(resources, Mapping):
            raise UserError(f"resources must be a dict of resource name -> amount, got "
                            f"{type(resources).__name__}")
        for key, amount in resources.items():
            if not isinstance(key, str) or not key:
                raise UserError(f"resources: a resource name must be a non-empty string, "
                                f"got {key!r}")
            if key in RAY_OWN_RESOURCES:
                raise UserError(f"resources: '{key}' is not a custom resource (Ray sets "
                                f"{', '.join(RAY_OWN_RESOURCES)} itself; give CPUs with "
                                f"num_cpus_per_device, and the runtime's devices use no GPU)")
            if not _number(amount) or amount < 0:  # type: ignore[operator]
                raise UserError(f"resources: '{key}' must be a number >= 0, got {amount!r}")
    if isinstance(max_restarts, bool) or not isinstance(max_restarts, (int, np.integer)) \
            or max_restarts < -1:
        raise UserError(f"max_restarts must be a whole number >= -1 (-1: always), got "
                        f"{max_restarts!r}")
    if not _number(restart_timeout_s) or restart_timeout_s <= 0:  # type: ignore[operator]
        raise UserError(f"restart_timeout_s must be a number of seconds > 0, got "
                        f"{restart_timeout_s!r}")


def ray_device_managers(devices: Sequence[Device], address: str | None = None,
                        num_cpus_per_device: float = 0,
                        resources: Mapping[str, float] | None = None,
                        max_restarts: int = 3, restart_timeout_s: float = 120
                        ) -> list[RayDeviceManager]:
    """One actor per device (module docstring); the options are checked before Ray is
    touched."""
    _check_options(address, num_cpus_per_device, resources, max_restarts, restart_timeout_s)
    ray = _ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address)
        except ValueError as err:
            if "ray[client]" not in str(err):
                raise
            # a ray:// address needs Ray Client's packages, which glow-mlir[ray] does not
            # pull in (Ray's message is three sentences)
            raise RayMissing(f"address {address!r}: a ray:// address needs Ray Client: "
                             f"pip install 'ray[client]'") from None
    # a part in flight when its actor dies is not retried by Ray (max_task_retries=0): the
    # host reports it lost, and requests after it run on the restarted actor
    remote = ray.remote(DeviceActor).options(num_cpus=float(num_cpus_per_device),
                                             resources={k: float(v) for k, v in
                                                        (resources or {}).items()},
                                             max_restarts=int(max_restarts), max_task_retries=0,
                                             max_concurrency=3)
    actors = [remote.remote(d, i) for i, d in enumerate(devices)]
    return [RayDeviceManager(a, d, i, float(restart_timeout_s), int(max_restarts))
            for i, (a, d) in enumerate(zip(actors, devices))]


__all__ = ["DeviceActor", "DeviceLost", "RayDeviceManager", "RayMissing",
           "ray_device_managers"]
