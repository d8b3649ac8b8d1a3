"""The runtime's HostManager and DeviceManager (runtime/host_manager.py,
runtime/device_manager.py): queue limits, priority order, callbacks, failures, networks
added and removed, device memory, replication. No timed assertions: requests are held
(`HostManager.hold`) to fix the order they start in."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import glow_mlir
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime import Device, DeviceManager, HostManager, RequestRefused
from glow_mlir.runtime.compiled_model import InputError
from glow_mlir.runtime.device_manager import DeviceMemoryError, NetworkNotFound
from glow_mlir.runtime.devices import DeviceError
from glow_mlir.runtime.host_manager import HostError
from onnx_testing import rand

CNN = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx"


def interp(n: int, memory: int = 16 << 20) -> list[Device]:
    return [Device(kind="cpu", backend="interpreter", memory_bytes=memory) for _ in range(n)]


@pytest.fixture(scope="module")
def reference():
    return glow_mlir.compile(str(CNN), backend="interpreter", cache=False)


@pytest.fixture
def host():
    with HostManager(interp(2), max_queue_size=4, max_active_requests=1) as h:
        h.add_network("cnn", str(CNN), partition="load-balance")
        yield h


def test_outputs_and_the_blocking_run(host, reference):
    x = {"image": rand(1, 3, 32, 32, seed=2)}
    (want,) = reference.run(x)
    (got,) = host.run("cnn", x)
    assert np.array_equal(want, got)
    assert len(host.network("cnn").dag.parts) == 2


def test_a_network_prints_in_one_short_line(host):
    # add_network returns it: printed whole, its plan and DAG were the graph's IR (~20 KB)
    text = repr(host.network("cnn"))
    assert text.startswith("Network(name='cnn', replicas=") and len(text) < 300, text


def test_a_full_queue_refuses_at_once(host):
    x = {"image": rand(1, 3, 32, 32)}
    with host.hold():
        futures = [host.run_network("cnn", x) for _ in range(4)]
        with pytest.raises(RequestRefused, match=r"4 queued and 0 running requests reach "
                                                 r"max_queue_size=4"):
            host.run_network("cnn", x)
        assert host.queued == 4 and host.active == 0
    outs = [f.result() for f in futures]
    assert all(np.array_equal(o[0], outs[0][0]) for o in outs)
    assert host.queued == 0 and host.active == 0
    host.run("cnn", x)  # room again


def test_lower_priority_numbers_start_first_fifo_among_equals(host):
    x = {"image": rand(1, 3, 32, 32)}
    host.max_queue_size = 20
    priorities = [5, 1, 3, 1, 0, 5, 3, 0]
    calls: list[int] = []
    with host.hold():
        start = len(host.started)
        futures = [host.run_network("cnn", x, callback=lambda o, e, i=i: calls.append(i),
                                    priority=p) for i, p in enumerate(priorities)]
    for f in futures:
        f.result()
    first_seq = min(host.started[start:])
    order = [s - first_seq for s in host.started[start:]]
    assert order == sorted(range(len(priorities)), key=lambda i: (priorities[i], i))
    assert calls == order  # one request at a time: they finish in the order they start


def test_every_callback_once_with_outputs_or_the_error(host):
    x = {"image": rand(1, 3, 32, 32)}
    seen: list[tuple] = []
    host.run_network("cnn", x, callback=lambda o, e: seen.append((o, e))).result()
    assert len(seen) == 1 and seen[0][1] is None and seen[0][0][0].shape == (1, 10)
    network = host.network("cnn")
    part = host.managers[network.replicas[0][1]].network(network.part_key(1))
    run = part.run

    def broken(inputs):
        raise RuntimeError("device fell off the bus")

    part.run = broken
    seen.clear()
    f = host.run_network("cnn", x, callback=lambda o, e: seen.append((o, e)))
    with pytest.raises(RuntimeError, match="fell off the bus"):
        f.result()
    assert len(seen) == 1 and seen[0][0] is None and "fell off" in str(seen[0][1])
    part.run = run
    assert host.run("cnn", x)[0].shape == (1, 10)  # the host goes on
    assert host.active == 0


def test_wrong_inputs_are_refused_before_queueing(host):
    with pytest.raises(InputError, match=r"input 'image' has shape \(1, 3, 8, 8\)"):
        host.run_network("cnn", {"image": rand(1, 3, 8, 8)})
    with pytest.raises(InputError, match="missing input 'image'"):
        host.run_network("cnn", {})
    with pytest.raises(NetworkNotFound, match=r"no network named 'resnet' \(networks: cnn\)"):
        host.run_network("resnet", {})
    with pytest.raises(HostError, match="priority must be a whole number"):
        host.run_network("cnn", {"image": rand(1, 3, 32, 32)}, priority=0.5)
    assert host.queued == 0


def test_a_refused_request_raises_and_calls_no_callback(host):
    """README: input errors raise from run_network at submission (fail fast); the
    callback is for the requests the host takes, and is not called for these."""
    seen: list[tuple] = []

    def callback(outputs, error):
        seen.append((outputs, error))

    with host.hold():  # a context manager; nothing taken starts inside it
        with pytest.raises(InputError):
            host.run_network("cnn", {"image": rand(1, 3, 8, 8)}, callback=callback)
        with pytest.raises(InputError):
            host.run_network("cnn", {}, callback=callback)
        with pytest.raises(NetworkNotFound):
            host.run_network("resnet", {}, callback=callback)
        taken = host.run_network("cnn", {"image": rand(1, 3, 32, 32)}, callback=callback)
        assert host.queued == 1 and seen == []
    taken.result()
    assert len(seen) == 1 and seen[0][1] is None  # only the request taken


def test_networks_added_and_removed(host):
    with pytest.raises(HostError, match="'cnn' is already added"):
        host.add_network("cnn", str(CNN))
    x = {"image": rand(1, 3, 32, 32)}
    with host.hold():
        f = host.run_network("cnn", x)
        with pytest.raises(HostError, match="'cnn' has 1 request"):
            host.remove_network("cnn")
    f.result()
    host.remove_network("cnn")
    assert host.networks() == [] and all(m.networks() == [] for m in host.managers)
    assert all(m.used_bytes == 0 for m in host.managers)


def test_bad_limits_and_devices():
    with pytest.raises(HostError, match="max_queue_size must be a whole number >= 1, got 0"):
        HostManager(interp(1), max_queue_size=0)
    with pytest.raises(HostError, match="at least one Device"):
        HostManager([])
    with pytest.raises(HostError, match="backend must be one of local, ray"):
        HostManager(interp(1), backend="mpi")
    with pytest.raises(DeviceError, match="kind must be one of cpu, accel, got 'gpu'"):
        Device(kind="gpu")
    with pytest.raises(DeviceError, match="memory_bytes must be a positive whole number"):
        Device(memory_bytes=-5)
    with pytest.raises(DeviceError, match="'accel' device runs backend accel, not 'cpu'"):
        Device(kind="accel", backend="cpu")


def test_device_memory_is_accounted(reference):
    """Networks on one device share its run area (placeholders and activations): two
    copies fit in their constants twice and one area, a third does not."""
    m = reference.memory
    weights, area = m.constant_bytes, m.mutable_bytes + m.activations_bytes
    assert weights > 0 and area > 100
    dm = DeviceManager(Device(memory_bytes=2 * weights + area + 100), index=3)
    dm.add_network("a", reference)
    assert dm.used_bytes == weights + area
    dm.add_network("b", reference)  # the sum of the two (2 * (weights + area)) does not fit
    assert 2 * (weights + area) > dm.device.memory_bytes
    assert dm.used_bytes == 2 * weights + area and dm.free_bytes == 100
    with pytest.raises(DeviceMemoryError, match=rf"'c' needs {weights:,} more bytes on device 3 "
                                                rf".*; 100 of its {2 * weights + area + 100:,} "
                                                rf"bytes are free"):
        dm.add_network("c", reference)
    dm.evict_network("a")
    dm.add_network("c", reference)
    with pytest.raises(NetworkNotFound, match="device 3 holds no network 'a'"):
        dm.evict_network("a")
    dm.stop()


@pytest.mark.parametrize("kind,partition", [("cpu", "memory"), ("cpu", "load-balance"),
                                            ("accel", "memory")])
def test_a_second_network_takes_the_empty_devices(kind, partition):
    """Three 200 KiB devices, a network on the first: a second one goes on the empty
    ones (it was refused: every part capped at the full device's few free bytes)."""
    devs = [Device(kind=kind, memory_bytes=200 << 10) for _ in range(3)]
    with HostManager(devs) as h:
        first = h.add_network("a", str(CNN), partition=partition)
        used = [m.used_bytes for m in h.managers]
        second = h.add_network("b", str(CNN), partition=partition)
        assert all(m.used_bytes <= m.device.memory_bytes for m in h.managers)
        if partition == "memory":  # one part each, on different devices
            assert len(first.replicas[0]) == len(second.replicas[0]) == 1
            assert used[second.replicas[0][0]] == 0
        (y,) = h.run("b", {"image": rand(1, 3, 32, 32, seed=1)})
        assert np.isfinite(y).all()


def test_networks_on_one_device_never_run_at_once(reference):
    """What lets them share a run area: while network 'a' runs, a queued run of 'b' does
    not start (a waits for b's start, and never sees it); b starts once a returns."""
    import threading

    dm = DeviceManager(Device(memory_bytes=64 << 20), index=0)
    dm.add_network("a", reference)
    dm.add_network("b", glow_mlir.compile(str(CNN), backend="interpreter", cache=False))
    b_started = threading.Event()
    seen: list[bool] = []
    a_model, b_model = dm.network("a"), dm.network("b")
    a_run, b_run = a_model.run, b_model.run

    def run_a(inputs):
        seen.append(b_started.wait(timeout=0.5))  # b would start here on a second worker
        return a_run(inputs)

    def run_b(inputs):
        b_started.set()
        return b_run(inputs)

    a_model.run, b_model.run = run_a, run_b  # type: ignore[method-assign]
    x = {"image": rand(1, 3, 32, 32, seed=4)}
    futures = [dm.run_function(n, x) for n in ("a", "b", "a", "b")]
    outs = [next(iter(f.result(timeout=60).values())) for f in futures]
    assert seen == [False, True]  # the second a runs after the first b started
    assert all(np.array_equal(outs[0], o) for o in outs)
    dm.stop()


def test_replication_on_idle_devices(reference):
    x = {"image": rand(1, 3, 32, 32, seed=7)}
    (want,) = reference.run(x)
    with HostManager(interp(4), max_active_requests=4) as host:
        network = host.add_network("cnn", str(CNN), replicate=True)
        assert network.replicas == [[0], [1], [2], [3]]
        futures = [host.run_network("cnn", x) for _ in range(8)]
        assert all(np.array_equal(f.result()[0], want) for f in futures)
        assert sum(m.runs for m in host.managers) == 8
        # each copy has an executor (an arena) of its own
        models = {id(m.network("cnn#0")._executor) for m in host.managers}
        assert len(models) == 4


def test_a_compiled_part_over_its_device_is_planned_again(monkeypatch, reference):
    """The partitioner's estimate fits, the compiled part (made 1 byte too big here) does
    not: the host plans again with less room and places two parts."""
    from glow_mlir.runtime import device_manager, partitioned

    devs = interp(2)
    whole = partitioned.plan(partitioned.optimized_graph(str(CNN), devs), devs).parts[0].bytes
    devs = interp(2, memory=whole + 16)
    real = device_manager.network_footprint
    calls = []

    def first_too_big(model):
        calls.append(model)
        return (whole + 17, 0) if len(calls) == 1 else real(model)

    monkeypatch.setattr(device_manager, "network_footprint", first_too_big)
    x = {"image": rand(1, 3, 32, 32, seed=9)}
    with HostManager(devs) as host:
        network = host.add_network("cnn", str(CNN))
        assert len(network.dag.parts) == 2
        assert np.array_equal(host.run("cnn", x)[0], reference.run(x)[0])


def test_a_model_with_state_is_refused_at_add_network():
    """A training step keeps its weights as state between runs: split over devices they
    would become inputs, so the host refuses it when it is added, naming the state."""
    from glow_mlir import model_zoo
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.transforms.graph.differentiate import TrainingConfig, differentiate_function

    module = import_onnx(model_zoo.digits_cnn(batch=2))
    differentiate_function(next(iter(module.ops)), TrainingConfig())
    with HostManager(interp(2)) as host:
        with pytest.raises(HostError, match=r"network 'step': a model with state \(conv_w1, "
                                            r".*cannot run on the runtime's devices"):
            host.add_network("step", module)
        assert host.networks() == []


def test_a_network_with_run_time_lengths_is_refused_when_added():
    # NonZero's output is a buffer of its bound and a count that CompiledModel trims; the
    # runtime's parts did not, and every request failed ("computed by no part")
    from onnx import helper

    from onnx_testing import make_model

    model = make_model([helper.make_node("NonZero", ["x"], ["nz"])],
                       {"x": rand(3, 4)}, ["nz"])
    with HostManager(interp(1)) as host:
        with pytest.raises(HostError, match=r"network 'nz': output\(s\) nz have a length "
                                            r"known only at run time .* glow_mlir.compile"):
            host.add_network("nz", model)
        assert host.networks() == []


@pytest.mark.parametrize("bad, message", [
    (3, "callback must be callable as callback(outputs, error), got int"),
    (lambda o: None, "callback must take two arguments (outputs, error); <lambda>(o)"),
    (lambda o, e, x: None, "callback must take two arguments"),
])
def test_a_wrong_callback_is_refused_at_run_network(host, bad, message):
    with pytest.raises(HostError, match=re.escape(message)):
        host.run_network("cnn", {"image": rand(1, 3, 32, 32)}, callback=bad)
    assert host.queued == 0 and host.active == 0
    host.run_network("cnn", {"image": rand(1, 3, 32, 32)}, callback=print_nothing).result()


def print_nothing(outputs, error=None, *rest):
    """Taking more with defaults is fine."""


def test_a_callback_that_raises_is_logged_in_one_line(host, caplog, capsys):
    def broken(outputs, error):
        raise ValueError("my bug")

    with caplog.at_level("ERROR", logger="glow_mlir.runtime"):
        host.run_network("cnn", {"image": rand(1, 3, 32, 32)}, callback=broken).result()
        host.run_network("cnn", {"image": rand(1, 3, 32, 32)}).result()  # after the callback
    [record] = caplog.records
    assert record.getMessage().startswith("the callback of request ")
    assert "network 'cnn' raised ValueError: my bug" in record.getMessage()
    assert record.exc_info is None and "Traceback" not in capsys.readouterr().err


def test_a_device_refuses_what_it_cannot_hold(reference):
    dm = DeviceManager(Device(kind="cpu"), 0)
    try:
        accel = glow_mlir.compile(str(CNN), backend="accel", cache=False)
        with pytest.raises(UserError, match="device 0: network 'd' is compiled for backend "
                                            "'accel'; a 'cpu' device runs cpu or interpreter"):
            dm.add_network("d", accel)
        with pytest.raises(UserError, match="add_network expects a CompiledModel .*got str"):
            dm.add_network("e", "foo")
        for bad in (5, ""):
            with pytest.raises(UserError, match="a network's name must be a non-empty string"):
                dm.add_network(bad, reference)
        assert dm.networks() == []
        dm.add_network("f", reference)  # an interpreter model on a cpu device
        assert dm.networks() == ["f"]
    finally:
        dm.stop()


def test_names_priorities_and_partition_indices_are_checked(host):
    x = {"image": rand(1, 3, 32, 32)}
    with pytest.raises(HostError, match=r"a network's name is a string, got list \['cnn'\]"):
        host.run_network(["cnn"], x)
    for bad in (5, ""):
        with pytest.raises(UserError, match="a network's name must be a non-empty string"):
            host.add_network(bad, str(CNN))
    for bad in (True, np.bool_(True), 1.0):
        with pytest.raises(HostError, match="priority must be a whole number"):
            host.run_network("cnn", x, priority=bad)
    assert host.run_network("cnn", x, priority=np.int64(1)).result()[0].shape == (1, 10)
    for bad in ("0", True, 1.0):
        with pytest.raises(HostError, match=rf"partition: op 'relu1' -> {re.escape(repr(bad))}: "
                                            rf"the device index must be an int"):
            host.add_network("p", str(CNN), partition={"relu1": bad})
    with pytest.raises(HostError, match="partition: an op name must be a non-empty string"):
        host.add_network("p", str(CNN), partition={5: 0})
    net = host.add_network("p", str(CNN), partition={"relu1": np.int64(0), "relu3": 1})
    assert net.replicas == [[0, 1]] and host.networks() == ["cnn", "p"]


def test_a_part_the_host_placed_is_not_evicted_behind_its_back(host):
    x = {"image": rand(1, 3, 32, 32)}
    network = host.network("cnn")
    device = network.replicas[0][0]
    with pytest.raises(UserError, match=rf"device {device}: 'cnn#0' is a part a HostManager "
                                        rf"placed; remove its network with "
                                        rf"host.remove_network\('cnn'\)"):
        host.managers[device].evict_network(network.part_key(0))
    assert host.run("cnn", x)[0].shape == (1, 10)  # still there
    host.remove_network("cnn")  # the host's own eviction
    assert all(m.networks() == [] for m in host.managers)


def test_a_stopped_host_refuses_networks_and_requests_at_once():
    x = {"image": rand(1, 3, 32, 32)}
    with HostManager(interp(1)) as h:
        h.add_network("a", str(CNN))
        h.run("a", x)
    stopped = "the host is stopped"
    with pytest.raises(HostError, match=stopped):
        h.run("a", x)
    with pytest.raises(HostError, match=stopped):  # raised, not a future holding it
        h.run_network("a", x)
    with pytest.raises(HostError, match=stopped):
        h.add_network("b", str(CNN))
    assert h.networks() == ["a"]
    h.stop()  # twice is no error


def test_a_callback_error_with_newlines_is_logged_in_one_line(host, caplog):
    def broken(outputs, error):
        raise ValueError("line one\nline two")

    with caplog.at_level("ERROR", logger="glow_mlir.runtime"):
        host.run_network("cnn", {"image": rand(1, 3, 32, 32)}, callback=broken).result()
        host.run_network("cnn", {"image": rand(1, 3, 32, 32)}).result()  # after the callback
    [record] = caplog.records
    assert "\n" not in record.getMessage() and "line one line two" in record.getMessage()


def test_wrong_arguments_are_one_line_user_errors(host):
    shapes = "input_shapes must be a dict of name -> shape"
    with pytest.raises(UserError, match=shapes):
        host.add_network("s", str(CNN), input_shapes="abc")
    with pytest.raises(UserError, match=shapes):
        glow_mlir.compile(str(CNN), input_shapes="abc", cache=False)
    for bad in ("yes", 2, None):
        with pytest.raises(HostError, match=f"replicate must be True or False, got "
                                            f"{re.escape(repr(bad))}"):
            host.add_network("r", str(CNN), replicate=bad)
    for bad in (" ", "\t\n"):
        with pytest.raises(UserError, match="a network's name must be a non-empty string "
                                            r"\(not only spaces\)"):
            host.add_network(bad, str(CNN))
    with pytest.raises(UserError, match="DeviceManager takes a Device .*got int 5"):
        DeviceManager(5)
    with pytest.raises(UserError, match="index must be a whole number >= 0, got -1"):
        DeviceManager(Device(kind="cpu"), -1)
    with pytest.raises(DeviceError, match="an 'accel' device runs backend accel"):
        Device(kind="accel", backend="cpu")
    assert host.networks() == ["cnn"]


def test_a_device_memory_message_has_one_pair_of_brackets_for_the_device(reference):
    dm = DeviceManager(Device(kind="cpu", backend="interpreter", memory_bytes=1024), 3)
    try:
        with pytest.raises(DeviceMemoryError) as err:
            dm.add_network("big", reference)
        assert "on device 3 (cpu, backend interpreter, 0.0 MiB) (constants" in str(err.value)
    finally:
        dm.stop()


def cpus(n: int, kib: int) -> list[Device]:
    return [Device(kind="cpu", memory_bytes=kib << 10) for _ in range(n)]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_model_too_big_for_one_cpu_device_is_split_over_several(n):
    # the partitioner counted a 3x3 filter's plain bytes; the cpu backend stores Winograd's
    # U (16/9 as many) instead: one part "fit" 160 KiB, its compiled form needed 167,248
    # bytes, every device refused it and the host never split it
    x = {"image": rand(1, 3, 32, 32, seed=5)}
    with HostManager(cpus(1, 1024)) as one:
        one.add_network("a", str(CNN))
        (want,) = one.run("a", x)
    with HostManager(cpus(n, 160)) as host:
        net = host.add_network("a", str(CNN))
        assert len(net.dag.parts) == 2
        (got,) = host.run("a", x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", ["small_cnn", "mlp"])
def test_the_partitioners_estimate_is_not_below_the_compiled_bytes(model):
    # small_cnn's 3x3 filters become Winograd's U, the mlp's 100-column weight the gemm's
    # panels (padded to whole panels): both counted unpacked, the estimate was 14 KB and
    # 7 KB low
    from glow_mlir import model_zoo

    source = str(CNN) if model == "small_cnn" else model_zoo.mlp(sizes=(64, 100, 10))
    with HostManager(cpus(1, 1024)) as host:
        net = host.add_network("a", source)
        estimate = net.plan.device_bytes()[0]
        assert host.managers[0].used_bytes <= estimate, (host.managers[0].used_bytes, estimate)


def test_a_refused_part_is_planned_smaller_on_every_device_of_its_size(monkeypatch):
    # an estimate below the compiled bytes (the weights counted unpacked, as before the
    # partitioner asked the cpu backend's forms): the retry shrank only the refusing
    # device's room, the part moved whole to the next equal device, and all attempts failed
    from glow_mlir.targets.cpu import packed_weights

    monkeypatch.setattr(packed_weights, "packed_form", lambda op, index: None)
    with HostManager(cpus(2, 160)) as host:
        net = host.add_network("a", str(CNN))
        assert len(net.dag.parts) == 2
        assert host.run("a", {"image": rand(1, 3, 32, 32)})[0].shape == (1, 10)


def test_a_retry_that_leaves_no_room_for_an_op_reports_what_was_refused(monkeypatch):
    # each refusal shrinks the room; once an op alone no longer fits it, the partitioner's
    # "op alone needs ... the largest device has" named the shrunk room, not the device
    from glow_mlir.runtime import device_manager

    monkeypatch.setattr(device_manager, "network_footprint", lambda model: (1 << 30, 0))
    with HostManager(cpus(2, 160)) as host:
        with pytest.raises(DeviceMemoryError, match=r"needs 1,073,741,824 more bytes on "
                                                    r"device \d"):
            host.add_network("a", str(CNN))
        assert host.networks() == []
