"""The runtime on Ray (runtime/ray_devices.py): each device an actor on a local Ray
started by this module (one `ray.init(num_cpus=2)` for all its tests); the same outputs as
the local runtime; a killed actor fails only the requests that need it; an actor killed
while it runs a part fails that request with `DeviceLost` (never a hang: every wait has a
timeout), is restarted by Ray and gets its networks again. Skipped without the `ray`
extra."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from onnx_testing import make_model, rand

ray = pytest.importorskip("ray", reason="the runtime's Ray backend needs the 'ray' extra "
                                        "(pip install 'glow-mlir[ray]')")

from glow_mlir.runtime import Device, HostManager  # noqa: E402
from glow_mlir.runtime.host_manager import HostError  # noqa: E402
from glow_mlir.runtime.ray_devices import DeviceLost  # noqa: E402

CNN = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx"


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()


def interp(n: int) -> list[Device]:
    return [Device(kind="cpu", backend="interpreter", memory_bytes=16 << 20) for _ in range(n)]


def test_ray_outputs_equal_the_local_runtime(local_ray):
    x = {"image": rand(1, 3, 32, 32, seed=11)}
    with HostManager(interp(2)) as local:
        local.add_network("cnn", str(CNN), partition="load-balance")
        want = local.run("cnn", x)
    host = HostManager(interp(2), backend="ray")
    try:
        network = host.add_network("cnn", str(CNN), partition="load-balance")
        assert len(network.dag.parts) == 2
        futures = [host.run_network("cnn", x, priority=i % 3) for i in range(6)]
        for f in futures:
            assert all(np.array_equal(w, g) for w, g in zip(want, f.result(timeout=300)))
        pids = {ray.get(m.actor.pid.remote()) for m in host.managers}
        assert len(pids) == 2  # two actor processes
        assert host.managers[0].used_bytes > 0
    finally:
        host.stop()


def test_a_killed_actor_fails_only_the_requests_that_need_it(local_ray):
    x = {"image": rand(1, 3, 32, 32, seed=12)}
    host = HostManager(interp(2), backend="ray", max_active_requests=8)
    try:
        a = host.add_network("a", str(CNN))
        b = host.add_network("b", str(CNN))
        assert a.replicas == [[0]] and b.replicas == [[1]]  # the emptiest device first
        want = host.run("b", x)
        errors: list[BaseException | None] = []
        with host.hold():
            doomed = [host.run_network("a", x, callback=lambda o, e: errors.append(e))
                      for _ in range(3)]
            fine = [host.run_network("b", x) for _ in range(3)]
            ray.kill(host.managers[0].actor)
        # ray.kill returns before the actor is gone: a held request is either sent to
        # the dying actor or finds it dead and not restartable; both fail it, and only it
        lost = r"device 0 .* (was lost while running|is lost: .* to run) 'a#0'"
        for f in doomed:
            with pytest.raises(DeviceLost, match=lost):
                f.result(timeout=300)
        assert len(errors) == 3 and all(e is not None for e in errors)
        for f in fine:
            assert np.array_equal(f.result(timeout=300)[0], want[0])
        assert host.active == 0 and host.queued == 0
        with pytest.raises(DeviceLost, match="could not be restarted"):  # ray.kill: no restart
            host.run_network("a", x).result(timeout=300)
        assert np.array_equal(host.run("b", x)[0], want[0])
    finally:
        host.stop()


def slow_model():
    """24 products of 256x256 matrices: about a second on the interpreter, so a kill
    lands while the part runs."""
    nodes, prev = [], "x"
    for i in range(24):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"m{i}"]))
        prev = f"m{i}"
    return make_model(nodes, {"x": ((256, 256), np.float32)}, [prev],
                      {"w": rand(256, 256, seed=1) * 0.05})


def wait_for(check, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_an_actor_killed_mid_run_is_restarted_and_gets_its_networks_again(local_ray):
    model = slow_model()
    x = {"x": rand(256, 256, seed=2)}
    host = HostManager(interp(1), backend="ray")
    try:
        host.add_network("slow", model)
        want = host.run_network("slow", x).result(timeout=300)
        manager = host.managers[0]
        pid = ray.get(manager.actor.pid.remote(), timeout=60)
        before = manager.started()
        running = host.run_network("slow", x)
        wait_for(lambda: manager.started() > before, "the part to start")
        os.kill(pid, signal.SIGKILL)  # the process dies; Ray restarts the actor
        try:  # a kill after the part finished would leave the right outputs
            got = running.result(timeout=300)
            lost = False
            assert all(np.array_equal(w, g) for w, g in zip(want, got))
        except DeviceLost as err:
            lost = True
            assert "device 0" in str(err) and "'slow#0'" in str(err)
        assert lost, "the kill came after the part had finished: make slow_model slower"
        again = host.run_network("slow", x).result(timeout=300)  # on the restarted actor
        assert all(np.array_equal(w, g) for w, g in zip(want, again))
        assert ray.get(manager.actor.pid.remote(), timeout=60) != pid
        assert manager.restores == 1
        assert host.active == 0 and host.queued == 0
    finally:
        host.stop()


@pytest.mark.parametrize("bad", [-2, 1.5, "3", True])
def test_max_restarts_must_be_a_whole_number(bad):
    from glow_mlir.ir.errors import UserError

    with pytest.raises(UserError, match="max_restarts must be a whole number >= -1"):
        HostManager(interp(1), backend="ray", max_restarts=bad)


def test_a_device_killed_after_a_part_is_restored_for_the_next_requests(local_ray):
    """Device 1 runs the second part, submitted from Ray's callback of the first: its
    restore must not wait on that thread (it timed out, then every later reship failed
    because the late load had landed)."""
    x = {"image": rand(1, 3, 32, 32, seed=13)}
    host = HostManager(interp(2), backend="ray", restart_timeout_s=120)
    try:
        host.add_network("c", str(CNN), partition={"relu1": 0, "relu3": 1})
        assert host.network("c").replicas == [[0, 1]]
        want = host.run("c", x)
        manager = host.managers[1]
        pid = ray.get(manager.actor.pid.remote(), timeout=60)
        os.kill(pid, signal.SIGKILL)
        try:  # Ray may restart the actor before the call reaches it: lost either way
            host.run_network("c", x).result(timeout=300)
            pytest.fail("the request on the killed actor did not fail")
        except DeviceLost as err:
            assert "device 1" in str(err) and "'c#1'" in str(err)
        for _ in range(2):  # restored once, then as before
            got = host.run_network("c", x).result(timeout=300)
            assert all(np.array_equal(w, g) for w, g in zip(want, got))
        assert manager.restores == 1
        assert ray.get(manager.actor.pid.remote(), timeout=60) != pid
        from glow_mlir.ir.errors import UserError

        with pytest.raises(UserError, match=r"'c#1' is a part a HostManager placed"):
            manager.evict_network("c#1")
        host.remove_network("c")
        assert manager.networks() == [] and host.managers[0].networks() == []
    finally:
        host.stop()


def test_a_load_that_meets_a_restarted_actor_ships_its_old_networks_too(local_ray):
    """The actor of device 1 is killed between requests; the next call to it is a load
    (another network): the restarted actor gets 'n#1' back then, so 'n' runs at once."""
    from glow_mlir.runtime.device_manager import NetworkNotFound

    x = {"image": rand(1, 3, 32, 32, seed=14)}
    host = HostManager(interp(2), backend="ray", max_restarts=3, restart_timeout_s=60)
    try:
        host.add_network("n", str(CNN), partition={"relu1": 0, "relu3": 1})
        want = host.run("n", x)
        manager = host.managers[1]
        os.kill(ray.get(manager.actor.pid.remote(), timeout=60), signal.SIGKILL)
        time.sleep(1)
        host.add_network("c", str(CNN), partition={"relu1": 1})
        assert manager.restores == 1
        assert all(np.array_equal(w, g) for w, g in zip(want, host.run("n", x)))
        with pytest.raises(NetworkNotFound, match="device 1 holds no network 'zzz'"):
            manager.evict_network("zzz")
    finally:
        host.stop()


def test_a_dead_actor_is_device_lost_not_rays_error(local_ray):
    """max_restarts=0: the kill is final; loads and runs say so in one line."""
    x = {"image": rand(1, 3, 32, 32, seed=15)}
    host = HostManager(interp(2), backend="ray", max_restarts=0, restart_timeout_s=60)
    try:
        host.add_network("n", str(CNN), partition={"relu1": 0, "relu3": 1})
        host.run("n", x)
        manager = host.managers[1]
        os.kill(ray.get(manager.actor.pid.remote(), timeout=60), signal.SIGKILL)
        time.sleep(1)
        with pytest.raises(DeviceLost) as err:
            host.run("n", x)
        assert "is not restarted (max_restarts=0)" in str(err.value)
        assert "Ray restarts it" not in str(err.value)
        with pytest.raises(DeviceLost, match=r"device 1 .* is not restarted "
                                             r"\(max_restarts=0\), so it cannot load 'c#0'"
                           ) as err:
            host.add_network("c", str(CNN), partition={"relu1": 1})
        assert "\n" not in str(err.value)
        assert "c" not in host.networks()
        # a strategy does not place a new network on the device lost for good
        host.add_network("d", str(CNN))
        assert host.network("d").replicas == [[0]]
        host.run("d", x)
    finally:
        host.stop()
    with pytest.raises(HostError, match="the host is stopped"):
        host.run("n", x)
    with pytest.raises(HostError, match="the host is stopped"):
        host.add_network("d", str(CNN))


def test_a_reship_of_a_network_the_actor_holds_is_a_no_op():
    from glow_mlir.ir.errors import UserError
    from glow_mlir.runtime.partitioned import optimized_graph
    from glow_mlir.runtime.ray_devices import DeviceActor

    text = str(optimized_graph(str(CNN), interp(1), None))
    actor = DeviceActor(interp(1)[0], 0)
    first = actor.load("n#0", text)
    assert actor.load("n#0", text) == first and actor.manager.networks() == ["n#0"]
    with pytest.raises(UserError, match="already holds a network 'n#0'"):
        actor.load("n#0", text + "\n")  # other content under the same name


@pytest.mark.parametrize("options, message", [
    ({"bogus": 1}, "backend 'ray' takes options address, num_cpus_per_device, resources, "
                   "max_restarts, restart_timeout_s; got bogus"),
    ({"num_cpus_per_device": -1}, "num_cpus_per_device must be a number >= 0, got -1"),
    ({"resources": {"GPU": 1}}, "resources: 'GPU' is not a custom resource"),
    ({"resources": {"accel_node": -1}}, "resources: 'accel_node' must be a number >= 0"),
    ({"resources": ["x"]}, "resources must be a dict"),
    ({"restart_timeout_s": -5}, "restart_timeout_s must be a number of seconds > 0, got -5"),
    ({"address": 5}, "address must be a Ray address string"),
])
def test_ray_options_are_checked_before_ray_is_touched(monkeypatch, options, message):
    import re

    from glow_mlir.ir.errors import UserError
    from glow_mlir.runtime import ray_devices

    def untouched():
        raise AssertionError("Ray was touched before the options were checked")

    monkeypatch.setattr(ray_devices, "_ray", untouched)
    with pytest.raises(UserError, match=re.escape(message)) as err:
        HostManager(interp(1), backend="ray", **options)
    assert "\n" not in str(err.value)


def test_a_ray_client_address_without_ray_client_says_what_to_install(monkeypatch):
    from glow_mlir.runtime import ray_devices

    def init(address=None):
        raise ValueError("Ray Client requires pip package `ray[client]`. If you installed "
                         "the minimal Ray (e.g. `pip install ray`), please reinstall by "
                         "executing `pip install ray[client]`.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    with pytest.raises(ray_devices.RayMissing, match=r"pip install 'ray\[client\]'") as err:
        HostManager(interp(1), backend="ray", address="ray://head:10001")
    assert "\n" not in str(err.value) and "address 'ray://head:10001'" in str(err.value)
