"""The pool's spin budget (`targets/cpu/thread_pool.py`): entry points compiled for more
than one thread call glow_pool_begin/glow_pool_end (one thread: neither), the linger
setting (environment, `set_linger_ns`, static parts) is honoured, workers stop spinning
once it is over, and runs after idle spells or from several Python threads give the
one-thread bits. CPU-time bounds only (what a loaded machine can only lower)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from xdsl.dialects import func

import glow_mlir
from glow_mlir.ir.native_runtime import POOL_BEGIN, POOL_END
from glow_mlir.targets.cpu import thread_pool
from test_cpu_threads import resnet_block


@pytest.fixture
def linger():
    """Sets the JIT pool's linger for one test, then puts the previous one back."""
    before = thread_pool.linger_ns()
    yield thread_pool.set_linger_ns
    thread_pool.set_linger_ns(before)


def _calls(compiled) -> list[tuple[str, list[int]]]:
    """(callee, constant i64 operands) of the entry point's calls of the pool hints."""
    out = []
    for f in compiled.module.walk():
        if isinstance(f, func.FuncOp) and "glow.activations_size" in f.attributes:
            for op in f.walk():
                if isinstance(op, func.CallOp) and op.callee.root_reference.data in (
                        POOL_BEGIN, POOL_END):
                    args = [o.owner.value.value.data for o in op.arguments]
                    out.append((op.callee.root_reference.data, args))
    return out


def test_entry_points_call_begin_and_end_with_their_threads_only_when_threaded():
    model = resnet_block()
    assert _calls(glow_mlir.compile(model, num_threads=3, cache=False)) == [
        (POOL_BEGIN, [3]), (POOL_END, [3])]
    assert _calls(glow_mlir.compile(model, num_threads=1, cache=False)) == []


def test_entry_points_without_parallel_regions_leave_the_pool_alone(monkeypatch):
    """LeNet's kernels are all below the split cut-off: compiled for 2 threads, its entry
    point neither calls nor declares the pool's hints (they would wake the workers to
    spin through the run for nothing), unless `POOL_HINTS_WITHOUT_REGIONS`."""
    from glow_mlir import model_zoo
    from glow_mlir.conversion import glow_ir_to_loops

    model = model_zoo.lenet()
    two = glow_mlir.compile(model, num_threads=2, cache=False)
    assert _calls(two) == []
    assert not any(isinstance(f, func.FuncOp) and f.sym_name.data in (POOL_BEGIN, POOL_END)
                   for f in two.module.walk())
    x = {"input": np.random.default_rng(2).standard_normal((1, 1, 28, 28)).astype(np.float32)}
    one = glow_mlir.compile(model, num_threads=1, cache=False)
    assert two.run(x)[0].tobytes() == one.run(x)[0].tobytes()
    monkeypatch.setattr(glow_ir_to_loops, "POOL_HINTS_WITHOUT_REGIONS", True)
    assert _calls(glow_mlir.compile(model, num_threads=2, cache=False)) == [
        (POOL_BEGIN, [2]), (POOL_END, [2])]


def _feeds():
    return {"x": np.random.default_rng(1).standard_normal((1, 16, 28, 28)).astype(np.float32)}


@pytest.mark.parametrize("linger_ms", [0, 1, 20])
def test_runs_after_idle_spells_give_the_one_thread_bits(linger, linger_ms):
    linger(int(linger_ms * 1e6))
    model = resnet_block()
    x = _feeds()
    want = [a.tobytes() for a in glow_mlir.compile(model, num_threads=1, cache=False).run(x)]
    two = glow_mlir.compile(model, num_threads=2, cache=False)
    for gap in (0, 0, 0.005, 0.03, 0):
        time.sleep(gap)
        assert [a.tobytes() for a in two.run(x)] == want


def test_concurrent_threaded_runs_give_the_one_thread_bits(linger):
    """Runs overlapping from several Python threads (the pool's run count goes up and
    down across them; a run that finds the pool busy runs its parts itself)."""
    linger(5_000_000)
    model = resnet_block()
    x = _feeds()
    want = [a.tobytes() for a in glow_mlir.compile(model, num_threads=1, cache=False).run(x)]
    two = glow_mlir.compile(model, num_threads=2, cache=False)
    bad: list[int] = []

    def work(i):
        for _ in range(6):
            if [a.tobytes() for a in two.run(x)] != want:
                bad.append(i)

    pool = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert bad == []


def test_sleeping_workers_and_caller_give_the_one_thread_bits(linger):
    """With no linger and a 50-cycle spin, workers sleep between parallel regions and the
    caller in its joins (the pool's handshakes: a sleeper counted before its last look at
    the generation, the caller flagged before its last look at the count); 2- and
    3-thread models from several Python threads (a stale worker claims nothing of a newer
    job) give the one-thread bits."""
    linger(0)
    spin = thread_pool._global("glow_pool_spin")
    model = resnet_block()
    x = _feeds()
    want = [a.tobytes() for a in glow_mlir.compile(model, num_threads=1, cache=False).run(x)]
    many = [glow_mlir.compile(model, num_threads=t, cache=False) for t in (2, 3)]
    bad: list[int] = []

    def work(i):
        for _ in range(10):
            if [a.tobytes() for a in many[i % 2].run(x)] != want:
                bad.append(i)

    before, spin.value = spin.value, 50
    try:
        pool = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        spin.value = before
    assert bad == []


def _others_cpu_ns() -> int:
    """CPU nanoseconds so far of this process's threads other than the calling one."""
    me = threading.get_native_id()
    total = 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) != me:
            try:
                with open(f"/proc/self/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
    return total


@pytest.mark.parametrize("linger_ms", [0, 30])
def test_workers_stop_spinning_once_the_linger_is_over(linger, linger_ms):
    """After the linger (and SPIN_CYCLES) the workers sleep: over a later 300 ms idle
    spell the other threads' CPU time stays far below it (spinning workers would take
    most of it)."""
    linger(int(linger_ms * 1e6))
    two = glow_mlir.compile(resnet_block(), num_threads=2, cache=False)
    x = _feeds()
    for _ in range(3):
        two.run(x)
    time.sleep(linger_ms / 1e3 + 0.1)
    before = _others_cpu_ns()
    time.sleep(0.3)
    assert _others_cpu_ns() - before < 30_000_000


def test_static_parts_turn_the_linger_off_and_back_on(linger):
    linger(7_000_000)
    thread_pool.set_static_parts(True)
    try:
        assert thread_pool.linger_ns() == 0
    finally:
        thread_pool.set_static_parts(False)
    assert thread_pool.linger_ns() == 7_000_000


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf"])
def test_a_bad_linger_setting_is_refused_at_every_install(monkeypatch, value):
    """Checked before anything is installed and at each call: one refusal (say, while a
    cached model was read) does not leave the pool installed with the default."""
    from glow_mlir.ir.errors import SettingError

    monkeypatch.setenv(thread_pool.ENV_LINGER, value)
    for _ in range(2):
        with pytest.raises(SettingError, match=f"GLOW_POOL_LINGER_MS='{value}'"):
            thread_pool.install()
    monkeypatch.setenv(thread_pool.ENV_LINGER, "")  # empty: unset
    thread_pool.install()


def test_linger_settings():
    with pytest.raises(ValueError, match="duration"):
        thread_pool.set_linger_ns(-1)
    code = ("from glow_mlir.targets.cpu import thread_pool; thread_pool.install(); "
            "print(thread_pool.linger_ns())")
    env = {**os.environ, thread_pool.ENV_LINGER: "2.5"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == 2_500_000
    env[thread_pool.ENV_LINGER] = "soon"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    assert out.returncode != 0 and "GLOW_POOL_LINGER_MS='soon'" in out.stderr
    env.pop(thread_pool.ENV_LINGER)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    assert int(out.stdout) == thread_pool.LINGER_NS
