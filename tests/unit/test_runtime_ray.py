"""The runtime on Ray (runtime/ray_devices.py): each device an actor on a local Ray
started by this module (one `ray.init(num_cpus=2)` for all its tests); the same outputs as
the local runtime; a killed actor fails only the requests that need it. Skipped without
the `ray` extra."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from onnx_testing import rand

ray = pytest.importorskip("ray", reason="the runtime's Ray backend needs the 'ray' extra "
                                        "(pip install 'glow-mlir[ray]')")

from glow_mlir.runtime import Device, HostManager  # noqa: E402

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
        for f in doomed:
            with pytest.raises(ray.exceptions.RayActorError):
                f.result(timeout=300)
        assert len(errors) == 3 and all(e is not None for e in errors)
        for f in fine:
            assert np.array_equal(f.result(timeout=300)[0], want[0])
        assert host.active == 0 and host.queued == 0
        with pytest.raises(ray.exceptions.RayActorError):
            host.run("a", x)
        assert np.array_equal(host.run("b", x)[0], want[0])
    finally:
        host.stop()
