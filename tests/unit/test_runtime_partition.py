"""The device partitioner (transforms/partition, runtime/partitioned.py): each strategy,
each validator's error, outputs of a partitioned model equal to the single device's bit
for bit on every backend, and `glow-compile --emit partitions`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.runtime import Device, HostManager
from glow_mlir.runtime.partitioned import compile_partitioned, optimized_graph, plan
from glow_mlir.tools.glow_compile import main as glow_compile
from glow_mlir.transforms.partition import PartitionError
from onnx_testing import make_model, rand
from tool_testing import in_process

CNN = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.onnx"
KIB = 1024


def image(seed: int = 0) -> dict[str, np.ndarray]:
    return {"image": rand(1, 3, 32, 32, seed=seed)}


def devices(n: int, kind: str = "cpu", backend: str = "interpreter",
            memory: int = 200 * KIB) -> list[Device]:
    return [Device(kind=kind, backend=backend, memory_bytes=memory) for _ in range(n)]


def cnn_plan(devs, partition="memory"):
    return plan(optimized_graph(str(CNN), devs), devs, partition)


@pytest.fixture(scope="module")
def argmax_model():
    """matmul -> relu -> arg_max: the accelerator has no unit for arg_max."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("ArgMax", ["r"], ["y"], axis=1, keepdims=0)]
    return make_model(nodes, {"x": ((2, 8), np.float32)}, ["y"], {"w": rand(8, 8, seed=3)})


# ---------------------------------------------------------------------- bit-identical


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "accel"])
def test_partitioned_outputs_equal_the_single_device_bit_for_bit(backend):
    kind = "accel" if backend == "accel" else "cpu"
    devs = devices(4, kind, backend)
    x = image(1)
    want = glow_mlir.compile(str(CNN), backend=backend, cache=False).run(x)
    with HostManager(devs) as host:
        network = host.add_network("cnn", str(CNN), partition="load-balance")
        got = host.run("cnn", x)
    assert len(network.dag.parts) >= 3  # really split
    assert [p.device for p in network.dag.parts] == sorted({p.device for p in network.dag.parts})
    assert all(np.array_equal(w, g) for w, g in zip(want, got))


# ---------------------------------------------------------------------- strategies


def test_memory_plan_makes_the_fewest_parts_that_fit():
    one = cnn_plan(devices(3, memory=16 << 20))
    assert len(one.parts) == 1
    small = cnn_plan(devices(4, memory=140 * KIB))  # the compiled model needs 149.3 KiB
    assert len(small.parts) > 1
    assert all(p.bytes <= 140 * KIB for p in small.parts)
    # contiguous runs feed only later parts
    assert all(d < p.index for p in small.parts for d in p.deps)


def test_load_balance_beats_an_equal_op_count_split():
    devs = devices(3, "accel", "accel", memory=16 << 20)
    balanced = cnn_plan(devs, "load-balance")
    assert {p.device for p in balanced.parts} == {0, 1, 2}
    steps = [op for p in balanced.parts for op in p.ops]
    third = -(-len(steps) // 3)
    naive = [steps[i:i + third] for i in range(0, len(steps), third)]
    naive_max = max(sum(devs[0].cost(op) for op in chunk) for chunk in naive)
    assert max(device_loads(balanced).values()) <= naive_max


def device_loads(p) -> dict[int, float]:
    """Each device's roofline cost: the sum of its parts'."""
    out: dict[int, float] = {}
    for part in p.parts:
        out[part.device] = out.get(part.device, 0.0) + part.cost
    return out


def test_heterogeneous_gives_an_unsupported_op_to_the_device_that_runs_it(argmax_model):
    devs = [Device(kind="accel", memory_bytes=1 << 20), Device(kind="cpu", memory_bytes=1 << 20)]
    p = plan(optimized_graph(argmax_model, devs), devs)
    assert [(part.device, [op.name for op in part.ops]) for part in p.parts] == [
        (0, ["glow.mat_mul", "glow.relu"]), (1, ["glow.arg_max"])]
    pm = compile_partitioned(argmax_model, devs)
    x = rand(2, 8, seed=4)
    h = pm.parts[0].run({"x": x})
    y = pm.parts[1].run(dict(zip(pm.dag.parts[1].input_names, h)))[0]
    w = rand(8, 8, seed=3)
    assert np.array_equal(y, np.argmax(np.maximum(x @ w, 0), axis=1))


def test_kinds_alternating_share_one_device_of_each(argmax_model):
    """relu (accel), arg_max (cpu), relu (accel), arg_max (cpu), relu (accel): five small
    runs on one accelerator and one cpu, each device holding its kind's parts (it needed
    3 accelerators: 'needs 3 accel devices ... (its parts by memory)')."""
    nodes, prev = [], "x"
    for i in range(3):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"]))
        prev = f"r{i}"
        if i < 2:
            nodes += [helper.make_node("ArgMax", [prev], [f"a{i}"], axis=1, keepdims=1),
                      helper.make_node("Cast", [f"a{i}"], [f"c{i}"], to=1),
                      helper.make_node("Add", [prev, f"c{i}"], [f"s{i}"])]
            prev = f"s{i}"
    x = rand(2, 8, seed=5)
    model = make_model(nodes, {"x": x}, [prev])
    devs = [Device(kind="accel", memory_bytes=1 << 20), Device(kind="cpu", memory_bytes=1 << 20)]
    for partition in ("memory", "load-balance"):
        p = plan(optimized_graph(model, devs), devs, partition)
        assert len(p.parts) > 2 and {part.device for part in p.parts} == {0, 1}
    (want,) = glow_mlir.compile(model, backend="interpreter", cache=False).run({"x": x})
    with HostManager(devs) as host:
        host.add_network("alt", model)
        (got,) = host.run("alt", {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6)
    tiny = [Device(kind="accel", memory_bytes=40), Device(kind="cpu", memory_bytes=1 << 20)]
    with pytest.raises(PartitionError, match="'accel'"):
        plan(optimized_graph(model, tiny), tiny)


def test_no_device_runs_an_op(argmax_model):
    devs = [Device(kind="accel")]
    with pytest.raises(PartitionError, match=r"no device runs 1 op\(s\): .*glow.arg_max"):
        plan(optimized_graph(argmax_model, devs), devs)


def test_user_plan_follows_the_names_and_orders_parts():
    devs = devices(3)
    p = cnn_plan(devs, {"relu1": 2, "relu2": 0, "fc1": 1})
    assert [part.device for part in p.parts] == [2, 0, 1]
    assert [part.deps for part in p.parts] == [[], [0], [1]]
    # the convolution before relu1 (not named) goes with the first named op
    assert [op.results[0].name_hint for op in p.parts[0].ops[:2]] == ["bn1", "relu1"]
    assert p.parts[1].ops[0].results[0].name_hint == "relu2"


def test_user_plan_runs_independent_parts_at_once():
    """Two branches on two devices: each part waits (at most 60 s) for the other to start,
    so a serial executor would leave one of them unset."""
    import threading

    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["x"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    model = make_model(nodes, {"x": ((4, 4), np.float32)}, ["y"])
    devs = devices(3)
    with HostManager(devs) as host:
        network = host.add_network("branches", model, partition={"a": 0, "b": 1, "y": 2})
        assert [p.deps for p in network.dag.parts] == [[], [], [0, 1]]
        started = [threading.Event(), threading.Event()]
        met = []
        for p in (0, 1):
            part = host.managers[p].network(network.part_key(p))
            run = part.run

            def meet(inputs, p=p, run=run):
                started[p].set()
                met.append(started[1 - p].wait(60))
                return run(inputs)

            part.run = meet
        x = rand(4, 4, seed=5)
        (y,) = host.run("branches", {"x": x})
    assert met == [True, True]
    np.testing.assert_allclose(y, np.maximum(x, 0) + 1 / (1 + np.exp(-x)), rtol=1e-6)


# ---------------------------------------------------------------------- validators


def test_an_op_too_big_for_any_device():
    need = (16 * 3 * 3 * 3 + 16) * 4 + 3 * 32 * 32 * 4 + 16 * 32 * 32 * 4  # weights, in, out
    with pytest.raises(PartitionError, match=rf"%bn1 \(glow.convolution\) alone needs "
                                             rf"{need:,} bytes .* the largest device has 40,000 "
                                             rf"bytes free"):
        cnn_plan(devices(4, memory=40_000))


def test_too_few_devices_for_the_memory():
    with pytest.raises(PartitionError, match=r"needs 4 devices \(its parts by memory\); "
                                             r"there are 2, with 143,360, 143,360 bytes free"):
        cnn_plan(devices(2, memory=140 * KIB))


@pytest.mark.parametrize("partition", ["memory", "load-balance"])
@pytest.mark.parametrize("small_first", [True, False])
def test_unequal_devices_are_each_filled_to_their_own_memory(partition, small_first):
    """A 10 KiB and a 300 KiB accelerator: the 153 KB model fits the large one whole (it
    was refused, every part capped at the smallest device's bytes); the memory strategy
    puts it there as one part, in either order, the devices' own bytes respected."""
    sizes = [10 * KIB, 300 * KIB] if small_first else [300 * KIB, 10 * KIB]
    devs = [Device(kind="accel", memory_bytes=m) for m in sizes]
    p = plan(optimized_graph(str(CNN), devs), devs, partition, order=[0, 1])
    big = sizes.index(300 * KIB)
    if partition == "memory":
        assert [part.device for part in p.parts] == [big]
    assert all(n <= sizes[d] for d, n in p.device_bytes().items())


@pytest.mark.parametrize("partition", ["memory", "load-balance"])
def test_a_full_device_does_not_shrink_the_others(partition):
    """Three devices, the first with 10 KiB free, the others empty (the host's order puts
    the empty ones first): the model goes on the empty ones."""
    devs = devices(3)
    devs[0] = Device(kind="cpu", backend="interpreter", memory_bytes=10 * KIB)
    p = plan(optimized_graph(str(CNN), devs), devs, partition, order=[1, 2, 0])
    assert {part.device for part in p.parts} <= {1, 2}


def test_ops_do_not_spill_onto_another_kind_for_memory():
    """A 100 KiB accelerator and a roomy cpu: the accelerator's ops stay on it and the
    model is refused, naming the kind and its free bytes (README's runtime section)."""
    devs = [Device(kind="accel", memory_bytes=100 * KIB), Device(kind="cpu")]
    with pytest.raises(PartitionError, match=r"needs 3 'accel' devices \(its parts by memory\); "
                                             r"there are 1, with 102,400 bytes free"):
        plan(optimized_graph(str(CNN), devs), devs, order=[0, 1])


def test_user_plan_with_a_cycle():
    with pytest.raises(PartitionError, match=r"cycle: part \d \(device \d\) -> part \d "
                                             r"\(device \d\) -> part \d"):
        cnn_plan(devices(2), {"relu1": 0, "pool1": 1, "relu2": 0})


def test_user_plan_device_out_of_range():
    with pytest.raises(PartitionError, match=r"puts %pool1 on device 5; there are 2 devices"):
        cnn_plan(devices(2), {"relu1": 0, "pool1": 5})


def test_user_plan_unknown_name():
    with pytest.raises(PartitionError, match=r"does not have: nosuch \(its ops include bn1, relu1"):
        cnn_plan(devices(2), {"nosuch": 0})


def test_user_plan_empty():
    with pytest.raises(PartitionError, match="the partition is empty"):
        cnn_plan(devices(2), {})


def test_user_plan_over_a_device_memory():
    with pytest.raises(PartitionError, match=r"device 0 \(cpu\) holds part\(s\) 0, which "
                                             r"need [\d,]+ bytes .* \([\d,]+ bytes too many\)"):
        cnn_plan(devices(2, memory=140 * KIB), {"relu1": 0})


def test_user_plan_op_the_device_does_not_run(argmax_model):
    devs = [Device(kind="accel", memory_bytes=1 << 20), Device(kind="cpu", memory_bytes=1 << 20)]
    module = optimized_graph(argmax_model, devs)
    with pytest.raises(PartitionError, match=r"device 0 \(accel\), which does not run 1 of "
                                             r"its op\(s\): %y \(glow.arg_max\)"):
        plan(module, devs, {"y": 0})


def test_unknown_strategy_and_no_devices():
    from glow_mlir.ir.errors import UserError

    with pytest.raises(UserError, match="partition must be 'memory' or 'load-balance'"):
        cnn_plan(devices(2), "fastest")
    with pytest.raises(UserError, match="at least one device"):
        optimized_graph(str(CNN), [])


# ---------------------------------------------------------------------- glow-compile


def test_glow_compile_emit_partitions(capsys, tmp_path):
    dot = tmp_path / "parts.dot"
    code, out, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                                "--backend", "accel", "--num-devices", 3,
                                "--device-memory-kib", 1024, "--partition", "load-balance",
                                "--dump-graph-dag", dot)
    assert code == 0, err
    assert "3 part(s) on 3 of 3 device(s), load-balanced partition" in out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("part ")] == [
        "part 0", "part 1", "part 2"]
    text = dot.read_text()
    assert {f"part {i}" for i in range(3)} <= {s for s in ("part 0", "part 1", "part 2")
                                               if s in text}
    from glow_mlir.analysis.graph_dot import PART_COLOURS

    assert all(c in text for c in PART_COLOURS[:3]) and PART_COLOURS[3] not in text


def test_glow_compile_partition_errors(capsys):
    code, _, err = in_process(glow_compile, capsys, CNN, "--num-devices", 2)
    assert code == 1 and "give --emit partitions too" in err
    code, _, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                              "--num-devices", 1, "--device-memory-kib", 50)
    assert code == 1 and "%relu1 (glow.convolution) alone needs 79,616 bytes" in err
    code, _, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                              "--num-devices", 1, "--device-memory-kib", 100)
    assert code == 1 and "needs 3 devices (its parts by memory); there are 1, with " \
        "102,400 bytes free" in err
    code, _, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions", "--backend",
                              "interpreter", "--num-devices", 3, "--device-memory-kib", 50)
    # one kind of device: not named ('cpu' is not the interpreter the user chose)
    assert code == 1 and "the largest device has 51,200 bytes free" in err
    assert "'cpu'" not in err


def test_glow_compile_partitions_refuses_a_profile(capsys, tmp_path):
    """The partitions are the float graph's: a profile would be ignored, so it is refused
    (before the profile file is read)."""
    code, _, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                              "--load-profile", tmp_path / "absent.yaml")
    assert code == 1
    assert err == ("glow-compile: error: --emit partitions partitions the float graph: "
                   "--load-profile would not quantize it; drop one of them\n")


# ---------------------------------------------------------------------- several parts a device


@pytest.fixture(scope="module")
def tall_model():
    """Four compute-heavy, weight-light products, then two weight-heavy, compute-light
    ones (1 MiB of weights each): as ResNet-50's first and last layers."""
    nodes, inits, prev = [], {}, "x"
    for i in range(1, 5):
        nodes += [helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Relu", [f"m{i}"], [f"a{i}"])]
        inits[f"w{i}"] = rand(64, 64, seed=i)
        prev = f"a{i}"
    nodes += [helper.make_node("MatMul", ["v", prev], ["s"]),
              helper.make_node("MatMul", ["s", "W1"], ["b1"]),
              helper.make_node("MatMul", ["b1", "W2"], ["y"])]
    inits.update(v=rand(1, 256, seed=7), W1=rand(64, 4096, seed=8), W2=rand(4096, 64, seed=9))
    return make_model(nodes, {"x": ((256, 64), np.float32)}, ["y"], inits)


def test_tight_memory_puts_several_parts_on_a_device(tall_model):
    """Each weight-heavy product fills most of a device, so a part per device leaves the
    four light products on one device; the balanced plan gives the devices with a heavy
    product some of them too."""
    from xdsl.dialects import func

    from glow_mlir.transforms.partition import balance
    from glow_mlir.transforms.partition.plan import _Graph

    devs = devices(3, memory=int(1.4 * 2**20))
    module = optimized_graph(tall_model, devs)
    p = plan(module, devs, "load-balance")
    assert len(p.parts) > len(devs)
    assert all(d < part.index for part in p.parts for d in part.deps)
    assert all(nbytes <= devs[d].memory_bytes for d, nbytes in p.device_bytes().items())
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    c = balance._Costs(_Graph(fn), devs[0])
    one_each = balance._min_max_cut(c, [devs[0].memory_bytes] * len(devs))
    assert one_each is not None
    assert max(device_loads(p).values()) < 0.9 * max(c.run(*r)[1] for r in one_each)
    x = {"x": rand(256, 64, seed=5)}
    want = glow_mlir.compile(tall_model, backend="interpreter", cache=False).run(x)
    with HostManager(devs) as host:
        network = host.add_network("tall", tall_model, partition="load-balance")
        assert len(set(network.replicas[0])) < len(network.dag.parts)
        got = host.run("tall", x)
    assert all(np.array_equal(w, g) for w, g in zip(want, got))


@pytest.fixture(scope="module")
def residual_model():
    """conv -> relu -> conv, a 1x1 conv of the input, their sum, relu: a residual block."""
    c = 16
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "wd", "bd"], ["cd"]),
             helper.make_node("Add", ["c2", "cd"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    inits = dict(w1=rand(c, c, 3, 3, seed=1), b1=rand(c, seed=2), w2=rand(c, c, 3, 3, seed=3),
                 b2=rand(c, seed=4), wd=rand(c, c, 1, 1, seed=5), bd=rand(c, seed=6))
    return make_model(nodes, {"x": ((1, c, 8, 8), np.float32)}, ["y"], inits)


@pytest.mark.parametrize("strategy", ["memory", "load-balance"])
def test_no_cut_between_a_product_and_its_epilogue(residual_model, strategy):
    """The add and relu after a convolution are its epilogue on the backends (fused, they
    round as one): every plan keeps them in the convolution's part."""
    from xdsl.dialects import func

    from glow_mlir.transforms.partition.plan import _Graph

    devs = devices(5, "accel", "accel", memory=22 * KIB)
    module = optimized_graph(residual_model, devs)
    g = _Graph(next(op for op in module.ops if isinstance(op, func.FuncOp)))
    assert [op.name for op, glued in zip(g.steps, g.glued) if glued] == ["glow.add", "glow.relu"]
    p = plan(module, devs, strategy)
    assert len(p.parts) > 1  # memory forces cuts
    names = [[op.name for op in part.ops] for part in p.parts]
    assert all(n[0] not in ("glow.add", "glow.relu") for n in names), names


def test_parts_on_one_device_share_its_run_area():
    """Two parts on device 0 need their weights and the larger of their run areas (a
    device runs one part at a time): a plan that fits only so is valid, one byte less
    memory is not."""
    from xdsl.dialects import func

    from glow_mlir.transforms.partition.plan import _finish, _Graph

    big = devices(2, memory=64 << 20)
    module = optimized_graph(str(CNN), big)
    g = _Graph(next(op for op in module.ops if isinstance(op, func.FuncOp)))
    n = len(g.steps)
    groups = [(list(range(0, n // 3)), 0), (list(range(n // 3, 2 * n // 3)), 1),
              (list(range(2 * n // 3, n)), 0)]
    first, _, last = _finish(g, big, groups, "user").parts
    need = first.weight_bytes + last.weight_bytes + max(first.area_bytes, last.area_bytes)
    assert need < first.bytes + last.bytes  # the sum would not fit
    exact = [Device(kind="cpu", backend="interpreter", memory_bytes=m)
             for m in (need, 64 << 20)]
    assert _finish(g, exact, groups, "user").device_bytes()[0] == need
    short = [Device(kind="cpu", backend="interpreter", memory_bytes=m)
             for m in (need - 1, 64 << 20)]
    with pytest.raises(PartitionError, match=rf"device 0 \(cpu\) holds part\(s\) 0, 2, which "
                                             rf"need {need:,} bytes .*1 bytes too many"):
        _finish(g, short, groups, "user")


@pytest.mark.parametrize("partition", ["memory", "load-balance"])
def test_devices_beyond_the_ops_are_not_looked_at(partition, monkeypatch):
    # a part holds an op at least: 10^7 devices were all sorted and priced by the
    # strategy (35 s, 2.5 GB) for a model of a dozen ops
    from glow_mlir.runtime.partitioned import steps
    from glow_mlir.transforms import partition as part

    module = optimized_graph(str(CNN), devices(1))
    n = steps(next(iter(module.ops)))
    few = plan(module, devices(n, backend="cpu"), partition)
    seen = []
    for name in ("memory_plan", "load_balanced_plan"):
        real = getattr(part, name)
        monkeypatch.setattr(part, name, lambda fn, d, real=real: seen.append(len(d))
                            or real(fn, d))
    many = devices(5000, backend="cpu")
    got = plan(module, many, partition)
    assert seen and max(seen) <= n, seen
    assert [(p.device, len(p.ops)) for p in got.parts] == [
        (p.device, len(p.ops)) for p in few.parts]
    assert len(got.devices) == 5000


def test_glow_compile_partitions_over_a_huge_device_count(capsys, monkeypatch):
    import glow_mlir.runtime.partitioned as partitioned

    sizes = []
    real = partitioned.plan
    monkeypatch.setattr(partitioned, "plan", lambda m, d, *a: sizes.append(len(d))
                        or real(m, d, *a))
    code, out, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                                "--num-devices", 10 ** 9, "--partition", "load-balance")
    assert code == 0, err
    assert "of 1000000000 device(s), load-balanced partition" in out
    assert sizes and max(sizes) <= 20, sizes


def test_glow_compile_partitions_count_the_cpus_packed_filters(capsys):
    # it reported small_cnn fitting one 160 KiB cpu device (152,936 bytes) that the
    # runtime refuses: the compiled part holds Winograd's U, 167,248 bytes
    code, out, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                                "--num-devices", 1, "--device-memory-kib", 160)
    assert code == 1 and "the model needs 2 devices" in err, (out, err)
    code, out, err = in_process(glow_compile, capsys, CNN, "--emit", "partitions",
                                "--num-devices", 1, "--device-memory-kib", 200)
    assert code == 0, err
    with HostManager([Device(kind="cpu", memory_bytes=200 << 10)]) as host:
        host.add_network("a", str(CNN))
        compiled = host.managers[0].used_bytes
    printed = int(out.split("device 0: ")[1].split(" of")[0].replace(",", ""))
    assert printed >= compiled, (printed, compiled)
