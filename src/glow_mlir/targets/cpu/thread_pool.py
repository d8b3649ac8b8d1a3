"""The native worker pool that runs the kernels' parallel loops, and the trace clock: a
small runtime written as LLVM IR text on libc's pthread functions.

    runtime_ir(triple)            # the runtime's LLVM IR (bundles link it in)
    install()                     # JIT: compile it once per process, make its symbols known

Why native: the entry point runs entirely in native code (one ctypes call per model run);
a pool driven from Python would pay a ctypes dispatch per kernel per call and need the
GIL. Why LLVM IR text: it is compiled by the llvmlite we already have, for the JIT (its
symbols registered with `llvm.add_symbol`, so every model's MCJIT engine links against the
one pool of the process) and for AOT bundles (linked into the bundle's object, with weak
linkage: two bundles in one program share one pool, and a program may define its own
`glow_parallel_for`, e.g. on its own thread pool: the pool hook).

    void glow_parallel_for(void (*chunk)(void *ctx, int64_t lo, int64_t hi, int64_t worker),
                           void *ctx, int64_t lo, int64_t hi, int64_t threads);

runs `chunk` over [lo, hi) split into min(threads, hi - lo) contiguous parts of (almost)
equal size; the caller (worker 0) and the pool's workers 1 .. threads-1 claim the parts
one at a time, so a worker the scheduler has not woken yet (a loaded machine) delays
nothing: the caller runs its part. It returns when all parts are done. `worker` is <
`threads`, which the generated code uses to give each worker its own scratch
(`conversion/glow_ir_to_loops/parallel.py`). Which part runs where never changes the
numbers: the generators mark only loops whose iterations are independent (no reduction
crosses them), and every part computes what the serial loop computes for it.

The pool is persistent: threads are created on first use (as many as the largest
`threads` asked so far, minus the caller) and sleep on a condition variable between
calls. A parallel region takes no mutex unless a thread sleeps: parts are claimed by a
compare-and-swap on a ticket (generation, parts, next part), done ones counted
atomically; a worker about to sleep counts itself in `glow_pool_sleepers`, the caller
about to sleep in its join sets `glow_pool_caller_waits`, and only then does the other
side take the mutex and wake it (with the mutex, a worker noticing a new job fought the
caller for it, and on a loaded machine a preempted holder stalled the other thread, in
every region). One call uses the pool at a time; a call that finds it busy (another Python
thread's model running) runs all its parts itself, in order, as worker 0: concurrent
calls never wait for each other and never deadlock. After fork() (the pool's threads do
not exist in the child), the first call in the child starts a new pool (`getpid`).

The caller's join: it spins SPIN_CYCLES for the workers' parts, then, while a run is
under way (`glow_pool_begin` .. `glow_pool_end`, linger not 0), spins on yielding, as the
idle workers do (`glow_pool_join_yield`, 1; 0 sleeps on the condition variable as before:
`benchmarks/pool_join.py` compares the two), else sleeps.

`glow_clock_ns()` is CLOCK_MONOTONIC in nanoseconds (`clock_gettime`), what traced entry
points call around each kernel (the same clock as Python's `time.monotonic_ns`), and
`glow_cpu_clock_ns(id)` the CPU-time clock `id` (the calling thread's: CPU time);
the measuring aid `profile_regions` times every part of every parallel region per worker
(`benchmarks/pool_regions.py` reads both).
"""

from __future__ import annotations

import os
import threading

from glow_mlir.ir.native_runtime import (
    CLOCK_NS,
    CPU_CLOCK_NS,
    MAX_THREADS,
    PARALLEL_FOR,
    POOL_BEGIN,
    POOL_END,
)

_RUNTIME = r"""
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @pthread_cond_signal(ptr)
declare i32 @getpid()
declare i32 @sched_yield()
declare i32 @clock_gettime(i32, ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i64 @llvm.readcyclecounter()
declare void @llvm.x86.sse2.pause()

; glibc's pthread_mutex_t (40 bytes) and pthread_cond_t (48 bytes) initializers are zeros
@glow_pool_mutex = internal global [64 x i8] zeroinitializer, align 64
@glow_pool_work = internal global [64 x i8] zeroinitializer, align 64
@glow_pool_done = internal global [64 x i8] zeroinitializer, align 64
@glow_pool_pid = internal global i32 0
@glow_pool_busy = internal global i64 0
@glow_pool_workers = internal global i64 0
@glow_pool_gen = internal global i64 0
@glow_pool_fn = internal global ptr null
@glow_pool_ctx = internal global ptr null
@glow_pool_lo = internal global i64 0
@glow_pool_n = internal global i64 0
@glow_pool_threads = internal global i64 1
@glow_pool_ticket = internal global i64 0, align 64
@glow_pool_done_parts = internal global i64 0, align 64
@glow_pool_sleepers = internal global i64 0
@glow_pool_caller_waits = internal global i64 0
@glow_pool_static = weak global i64 0
@glow_pool_spin = weak global i64 SPIN
@glow_pool_linger_ns = weak global i64 LINGERNS
@glow_pool_active = internal global i64 0
@glow_pool_until = internal global i64 0
@glow_pool_run_threads = internal global i64 0
@glow_pool_seen = internal global [MAX x i64] zeroinitializer, align 64
@glow_pool_prof = weak global ptr null
@glow_pool_join_yield = weak global i64 1
@glow_pool_prof_regions = weak global i64 0
@glow_pool_region = weak global i64 0

define weak i64 @glow_clock_ns() {
  %t = call i64 @glow_cpu_clock_ns(i32 1)
  ret i64 %t
}

define weak i64 @glow_cpu_clock_ns(i32 %id) {
  %ts = alloca { i64, i64 }, align 8
  %r = call i32 @clock_gettime(i32 %id, ptr %ts)
  %s = load i64, ptr %ts
  %np = getelementptr inbounds { i64, i64 }, ptr %ts, i32 0, i32 1
  %ns = load i64, ptr %np
  %s9 = mul i64 %s, 1000000000
  %t = add i64 %s9, %ns
  ret i64 %t
}

; part `p` of `parts` of [lo, lo + n) on worker `w`: [lo + n*p/parts, lo + n*(p+1)/parts)
define internal void @glow_pool_run(ptr %fn, ptr %ctx, i64 %lo, i64 %n, i64 %parts, i64 %p,
                                    i64 %w) {
  %a = mul i64 %n, %p
  %s = sdiv i64 %a, %parts
  %p1 = add i64 %p, 1
  %b = mul i64 %n, %p1
  %e = sdiv i64 %b, %parts
  %s0 = add i64 %lo, %s
  %e0 = add i64 %lo, %e
  %prof = load ptr, ptr @glow_pool_prof
  %profiled = icmp ne ptr %prof, null
  br i1 %profiled, label %timed, label %plain
plain:
  call void %fn(ptr %ctx, i64 %s0, i64 %e0, i64 %w)
  ret void
timed:
  ; measuring aid (`profile_regions`): this thread's CPU ns on the part, added to
  ; prof[region * MAX + w], the region being the run's parallel_for call number
  %t0 = call i64 @glow_cpu_clock_ns(i32 3)
  call void %fn(ptr %ctx, i64 %s0, i64 %e0, i64 %w)
  %t1 = call i64 @glow_cpu_clock_ns(i32 3)
  %dt = sub i64 %t1, %t0
  %region = load atomic i64, ptr @glow_pool_region acquire, align 8
  %cap = load i64, ptr @glow_pool_prof_regions
  %inside = icmp slt i64 %region, %cap
  br i1 %inside, label %add, label %plain_out
add:
  %row = mul i64 %region, MAX
  %slot = add i64 %row, %w
  %cell = getelementptr inbounds i64, ptr %prof, i64 %slot
  atomicrmw add ptr %cell, i64 %dt monotonic
  br label %plain_out
plain_out:
  ret void
}

; Run the parts of job `gen` not claimed yet, as worker `w`, without the mutex: a part is
; claimed by a compare-and-swap on @glow_pool_ticket (gen << 24 | parts << 12 | next), so
; a worker that saw an older job (descheduled since) claims nothing of a newer one; the
; job's fields it read before a successful swap are that job's (the caller writes the
; next job's only after every part of this one is claimed and done). Static parts (a
; measuring aid, `set_static_parts`): worker w runs part w only, once.
define internal void @glow_pool_claim(i64 %w, i64 %gen) {
entry:
  %static = load i64, ptr @glow_pool_static
  %isstatic = icmp ne i64 %static, 0
  br label %top
top:
  %t = load atomic i64, ptr @glow_pool_ticket acquire, align 8
  %tg = lshr i64 %t, 24
  %same = icmp eq i64 %tg, %gen
  br i1 %same, label %check, label %out
check:
  %k = and i64 %t, 4095
  %t12 = lshr i64 %t, 12
  %parts = and i64 %t12, 4095
  %more = icmp slt i64 %k, %parts
  br i1 %more, label %static_check, label %out
static_check:
  br i1 %isstatic, label %own, label %fields
own:
  ; static: part w, claimed by no one else; job `gen` cannot end before it is done, so
  ; the fields read now are that job's (no swap: a worker never waits for another)
  %mine = icmp slt i64 %w, %parts
  br i1 %mine, label %fields, label %out
fields:
  %fn = load ptr, ptr @glow_pool_fn
  %ctx = load ptr, ptr @glow_pool_ctx
  %lo = load i64, ptr @glow_pool_lo
  %n = load i64, ptr @glow_pool_n
  %threads = load i64, ptr @glow_pool_threads
  %user = icmp slt i64 %w, %threads
  br i1 %user, label %how, label %out
how:
  br i1 %isstatic, label %run, label %swap
swap:
  %t1 = add i64 %t, 1
  %r = cmpxchg ptr @glow_pool_ticket, i64 %t, i64 %t1 acq_rel acquire
  %won = extractvalue { i64, i1 } %r, 1
  br i1 %won, label %run, label %top
run:
  %part = phi i64 [ %w, %how ], [ %k, %swap ]
  call void @glow_pool_run(ptr %fn, ptr %ctx, i64 %lo, i64 %n, i64 %parts, i64 %part, i64 %w)
  %d = atomicrmw add ptr @glow_pool_done_parts, i64 1 seq_cst
  %d1 = add i64 %d, 1
  %all = icmp eq i64 %d1, %parts
  br i1 %all, label %last, label %again
again:
  br i1 %isstatic, label %out, label %top
last:
  ; the caller may wait on @glow_pool_done (it set @glow_pool_caller_waits, then read
  ; the count, both seq_cst: one of the two sees the other)
  %waits = load atomic i64, ptr @glow_pool_caller_waits seq_cst, align 8
  %asleep = icmp ne i64 %waits, 0
  br i1 %asleep, label %signal, label %out
signal:
  ; with the mutex released: the caller, if it holds it, is in pthread_cond_wait now
  call i32 @pthread_mutex_lock(ptr @glow_pool_mutex)
  call i32 @pthread_mutex_unlock(ptr @glow_pool_mutex)
  call i32 @pthread_cond_signal(ptr @glow_pool_done)
  br label %out
out:
  ret void
}

; Spin (pausing) while `*addr == value` is `equal`, for at most @glow_pool_spin cycles:
; the worker waiting for a job and the caller waiting for the workers' parts both spin
; this way before they sleep; each rechecks under the mutex afterwards.
define internal void @glow_pool_spin_while(ptr %addr, i64 %value, i1 %equal) {
entry:
  %t0 = call i64 @llvm.readcyclecounter()
  %limit = load i64, ptr @glow_pool_spin
  br label %spin
spin:
  %v = load atomic i64, ptr %addr acquire, align 8
  %same = icmp eq i64 %v, %value
  %keep = icmp eq i1 %same, %equal
  br i1 %keep, label %spin_on, label %out
spin_on:
  call void @llvm.x86.sse2.pause()
  %t = call i64 @llvm.readcyclecounter()
  %spent = sub i64 %t, %t0
  %more = icmp ult i64 %spent, %limit
  br i1 %more, label %spin, label %out
out:
  ret void
}

; An idle worker's wait for the next job: spin while the generation is still `seen`, for
; @glow_pool_spin cycles, and on while a run is under way (@glow_pool_until is 2^63-1
; from glow_pool_begin to glow_pool_end) or until @glow_pool_until (CLOCK_MONOTONIC ns,
; the end of the linger after a run).
; Only workers the run uses (`id` < its threads) spin through it.
define internal void @glow_pool_worker_spin(i64 %seen, i64 %id) {
entry:
  %t0 = call i64 @llvm.readcyclecounter()
  %limit = load i64, ptr @glow_pool_spin
  br label %spin
spin:
  %v = load atomic i64, ptr @glow_pool_gen acquire, align 8
  %same = icmp eq i64 %v, %seen
  br i1 %same, label %spin_on, label %out
spin_on:
  call void @llvm.x86.sse2.pause()
  %t = call i64 @llvm.readcyclecounter()
  %spent = sub i64 %t, %t0
  %short = icmp ult i64 %spent, %limit
  br i1 %short, label %spin, label %linger
linger:
  %until = load atomic i64, ptr @glow_pool_until monotonic, align 8
  %running = icmp eq i64 %until, 9223372036854775807
  %users = load atomic i64, ptr @glow_pool_run_threads monotonic, align 8
  %used = icmp slt i64 %id, %users
  %spin_on_run = and i1 %running, %used
  br i1 %spin_on_run, label %yield, label %linger_clock
linger_clock:
  %now = call i64 @glow_clock_ns()
  %before = icmp slt i64 %now, %until
  br i1 %before, label %yield, label %out
yield:
  ; past @glow_pool_spin, spin yielding: on a loaded machine the threads waiting for this
  ; core (the caller among them) run first, on a quiet one sched_yield returns at once
  call i32 @sched_yield()
  br label %spin
out:
  ret void
}

; Called by an entry point compiled for `threads` > 1 at its start: while a run is under
; way idle workers spin instead of sleeping between its parallel regions, and those
; asleep are woken now, so their wake-up overlaps the run's first kernels. With
; @glow_pool_linger_ns 0 the workers neither spin through runs nor linger after them.
define weak void @glow_pool_begin(i64 %threads) {
entry:
  %many = icmp sgt i64 %threads, 1
  br i1 %many, label %count, label %out
count:
  atomicrmw add ptr @glow_pool_active, i64 1 monotonic
  %linger = load i64, ptr @glow_pool_linger_ns
  %spins = icmp ne i64 %linger, 0
  br i1 %spins, label %run, label %out
run:
  store atomic i64 %threads, ptr @glow_pool_run_threads monotonic, align 8
  store atomic i64 9223372036854775807, ptr @glow_pool_until release, align 8
  %pid = call i32 @getpid()
  %oldpid = load i32, ptr @glow_pool_pid
  %same = icmp eq i32 %pid, %oldpid
  %have = load i64, ptr @glow_pool_workers
  %some = icmp sgt i64 %have, 0
  %wake = and i1 %same, %some
  br i1 %wake, label %wake_up, label %out
wake_up:
  ; taking the mutex orders this after any worker's last look at @glow_pool_until before
  ; it sleeps: that worker is waiting on the condition variable by now
  call i32 @pthread_mutex_lock(ptr @glow_pool_mutex)
  call i32 @pthread_mutex_unlock(ptr @glow_pool_mutex)
  call i32 @pthread_cond_broadcast(ptr @glow_pool_work)
  br label %out
out:
  ret void
}

; Called by the same entry points before they return: when no run is left under way,
; idle workers spin on for @glow_pool_linger_ns (the next run often comes soon: a
; server's next request, a benchmark's next call), then sleep.
define weak void @glow_pool_end(i64 %threads) {
entry:
  %many = icmp sgt i64 %threads, 1
  br i1 %many, label %count, label %out
count:
  %old = atomicrmw sub ptr @glow_pool_active, i64 1 monotonic
  %last = icmp sle i64 %old, 1
  br i1 %last, label %linger, label %out
linger:
  %linger_ns = load i64, ptr @glow_pool_linger_ns
  %now = call i64 @glow_clock_ns()
  %until = add i64 %now, %linger_ns
  store atomic i64 %until, ptr @glow_pool_until release, align 8
  br label %out
out:
  ret void
}

define internal ptr @glow_pool_worker(ptr %arg) {
entry:
  %id = ptrtoint ptr %arg to i64
  %seenp = getelementptr inbounds [MAX x i64], ptr @glow_pool_seen, i64 0, i64 %id
  %seen0 = load i64, ptr %seenp
  br label %loop
loop:
  ; `seen` is the last generation this worker looked at
  %seen = phi i64 [ %seen0, %entry ], [ %seen, %spin_done ], [ %seen, %wake_out ],
                  [ %gen, %job ]
  %gen = load atomic i64, ptr @glow_pool_gen acquire, align 8
  %idle = icmp eq i64 %gen, %seen
  br i1 %idle, label %spin, label %job
spin:
  ; spin a while before sleeping: the next kernel's job usually comes within
  ; microseconds, and waking a sleeping thread (a halted virtual CPU) takes far longer
  call void @glow_pool_worker_spin(i64 %seen, i64 %id)
  %gen2 = load atomic i64, ptr @glow_pool_gen acquire, align 8
  %idle2 = icmp eq i64 %gen2, %seen
  br i1 %idle2, label %sleep, label %spin_done
spin_done:
  br label %loop
sleep:
  ; counted in @glow_pool_sleepers before the last look at the generation (seq_cst: a
  ; caller that stores a new one and then reads the count sees this worker, or this
  ; worker sees its generation); the caller wakes sleepers after taking the mutex
  call i32 @pthread_mutex_lock(ptr @glow_pool_mutex)
  atomicrmw add ptr @glow_pool_sleepers, i64 1 seq_cst
  br label %recheck
recheck:
  %gen3 = load atomic i64, ptr @glow_pool_gen seq_cst, align 8
  %idle3 = icmp eq i64 %gen3, %seen
  br i1 %idle3, label %run_check, label %wake
run_check:
  ; a run began (glow_pool_begin) since the spin ended: spin again, do not sleep (its
  ; wake-up, sent after it stored @glow_pool_until and took the mutex, may be gone)
  %until = load atomic i64, ptr @glow_pool_until acquire, align 8
  %running = icmp eq i64 %until, 9223372036854775807
  %users = load atomic i64, ptr @glow_pool_run_threads monotonic, align 8
  %used = icmp slt i64 %id, %users
  %spin_again = and i1 %running, %used
  br i1 %spin_again, label %wake, label %wait
wait:
  call i32 @pthread_cond_wait(ptr @glow_pool_work, ptr @glow_pool_mutex)
  br label %recheck
wake:
  atomicrmw sub ptr @glow_pool_sleepers, i64 1 seq_cst
  call i32 @pthread_mutex_unlock(ptr @glow_pool_mutex)
  br label %wake_out
wake_out:
  br label %loop
job:
  ; only workers below the job's thread count take part (their scratch exists): the
  ; claim checks
  call void @glow_pool_claim(i64 %id, i64 %gen)
  br label %loop
}

define weak void @glow_parallel_for(ptr %fn, ptr %ctx, i64 %lo, i64 %hi, i64 %threads) {
entry:
  %n = sub i64 %hi, %lo
  %few = icmp slt i64 %n, %threads
  %parts0 = select i1 %few, i64 %n, i64 %threads
  %big = icmp sgt i64 %parts0, MAX
  %parts = select i1 %big, i64 MAX, i64 %parts0
  %one = icmp sle i64 %parts, 1
  br i1 %one, label %serial, label %forked
forked:
  %pid = call i32 @getpid()
  %oldpid = load i32, ptr @glow_pool_pid
  %same = icmp eq i32 %pid, %oldpid
  br i1 %same, label %lock, label %reset
reset:
  ; a new process (first use, or a child after fork): no pool threads exist here
  call void @llvm.memset.p0.i64(ptr @glow_pool_mutex, i8 0, i64 64, i1 false)
  call void @llvm.memset.p0.i64(ptr @glow_pool_work, i8 0, i64 64, i1 false)
  call void @llvm.memset.p0.i64(ptr @glow_pool_done, i8 0, i64 64, i1 false)
  store i64 0, ptr @glow_pool_workers
  store i64 0, ptr @glow_pool_busy
  store i64 0, ptr @glow_pool_sleepers
  store i64 0, ptr @glow_pool_caller_waits
  store i32 %pid, ptr @glow_pool_pid
  br label %lock
lock:
  ; one call uses the pool at a time: another finding it busy runs its parts itself
  %took = cmpxchg ptr @glow_pool_busy, i64 0, i64 1 acquire monotonic
  %mine = extractvalue { i64, i1 } %took, 1
  br i1 %mine, label %claim, label %serial
claim:
  %gen = load i64, ptr @glow_pool_gen
  br label %grow
grow:
  %have = load i64, ptr @glow_pool_workers
  %need = sub i64 %threads, 1
  %need1 = icmp sgt i64 %need, MAXW
  %need2 = select i1 %need1, i64 MAXW, i64 %need
  %short = icmp slt i64 %have, %need2
  br i1 %short, label %spawn, label %dispatch
spawn:
  %id = add i64 %have, 1
  %seenp = getelementptr inbounds [MAX x i64], ptr @glow_pool_seen, i64 0, i64 %id
  store i64 %gen, ptr %seenp
  %tid = alloca i64, align 8
  %idp = inttoptr i64 %id to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @glow_pool_worker, ptr %idp)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %spawned, label %dispatch
spawned:
  store i64 %id, ptr @glow_pool_workers
  br label %grow
dispatch:
  ; the job's fields, then its ticket, then its generation (release): a worker that sees
  ; the generation sees the rest
  store ptr %fn, ptr @glow_pool_fn
  store ptr %ctx, ptr @glow_pool_ctx
  store i64 %lo, ptr @glow_pool_lo
  store i64 %n, ptr @glow_pool_n
  store i64 %threads, ptr @glow_pool_threads
  store atomic i64 0, ptr @glow_pool_done_parts monotonic, align 8
  %region_was = load i64, ptr @glow_pool_region
  %region_next = add i64 %region_was, 1
  store atomic i64 %region_next, ptr @glow_pool_region release, align 8
  %gen1 = add i64 %gen, 1
  %tgen = shl i64 %gen1, 24
  %tparts = shl i64 %parts, 12
  %ticket = or i64 %tgen, %tparts
  store atomic i64 %ticket, ptr @glow_pool_ticket release, align 8
  store atomic i64 %gen1, ptr @glow_pool_gen seq_cst, align 8
  %sleepers = load atomic i64, ptr @glow_pool_sleepers seq_cst, align 8
  %asleep = icmp ne i64 %sleepers, 0
  br i1 %asleep, label %wake, label %mine_too
wake:
  ; broadcast with the mutex released: a worker woken while it is held goes back to
  ; sleep on the mutex and needs a second wake-up when it is let go (a futex call and,
  ; on a virtual machine, an interrupt to a halted vCPU). Taking it first orders this
  ; after a counted sleeper's last look at the generation: it is waiting by now.
  call i32 @pthread_mutex_lock(ptr @glow_pool_mutex)
  call i32 @pthread_mutex_unlock(ptr @glow_pool_mutex)
  call i32 @pthread_cond_broadcast(ptr @glow_pool_work)
  br label %mine_too
mine_too:
  ; the caller claims parts too: a worker the scheduler has not woken yet leaves its
  ; part to whoever comes first
  call void @glow_pool_claim(i64 0, i64 %gen1)
  br label %join
join:
  ; the workers' parts usually end within microseconds of ours: spin before sleeping
  call void @glow_pool_spin_while(ptr @glow_pool_done_parts, i64 %parts, i1 false)
  %left = load atomic i64, ptr @glow_pool_done_parts acquire, align 8
  %done = icmp eq i64 %left, %parts
  br i1 %done, label %finish, label %join_running
join_running:
  ; while a run is under way (glow_pool_begin .. glow_pool_end) the caller spins on,
  ; yielding, as the idle workers do: asleep, its wake-up when the last part ends is a
  ; halted vCPU's (tens of us, per parallel region), after ~80 us of spinning already
  %jy = load i64, ptr @glow_pool_join_yield
  %jyon = icmp ne i64 %jy, 0
  %juntil = load atomic i64, ptr @glow_pool_until monotonic, align 8
  %jrunning = icmp eq i64 %juntil, 9223372036854775807
  %jspin = and i1 %jyon, %jrunning
  br i1 %jspin, label %join_yield, label %join_sleep
join_yield:
  call i32 @sched_yield()
  br label %join
join_sleep:
  ; flagged in @glow_pool_caller_waits before the last look at the count (seq_cst; the
  ; worker ending the last part reads the flag after counting it, then signals with
  ; the mutex taken and released: this thread is waiting by then)
  call i32 @pthread_mutex_lock(ptr @glow_pool_mutex)
  store atomic i64 1, ptr @glow_pool_caller_waits seq_cst, align 8
  br label %join_check
join_check:
  %left2 = load atomic i64, ptr @glow_pool_done_parts seq_cst, align 8
  %done2 = icmp eq i64 %left2, %parts
  br i1 %done2, label %join_woken, label %join_wait
join_wait:
  call i32 @pthread_cond_wait(ptr @glow_pool_done, ptr @glow_pool_mutex)
  br label %join_check
join_woken:
  store atomic i64 0, ptr @glow_pool_caller_waits seq_cst, align 8
  call i32 @pthread_mutex_unlock(ptr @glow_pool_mutex)
  br label %finish
finish:
  store atomic i64 0, ptr @glow_pool_busy release, align 8
  ret void
serial:
  call void %fn(ptr %ctx, i64 %lo, i64 %hi, i64 0)
  ret void
}
"""


def runtime_ir(triple: str) -> str:
    """The runtime's LLVM IR module for target `triple`."""
    body = (_RUNTIME.replace("MAXW", str(MAX_THREADS - 1)).replace("MAX", str(MAX_THREADS))
            .replace("SPIN", str(SPIN_CYCLES)).replace("LINGERNS", str(LINGER_NS)))
    return f'target triple = "{triple}"\n{body}'


SPIN_CYCLES = 200_000
"""Time-stamp-counter cycles (~80 us at 2.5 GHz) a worker spins for the next job, and the
caller for the workers' parts, before sleeping on the condition variable. Measured on
this 2-vCPU KVM guest, quiet (two-core FMA peak 2.1x one core's), with workers that
sleep at once: ResNet-18 2 threads vs 1 1.20x, MobileNet-v1 0.98x, a BERT layer 1.03x,
while one thread's CPU time over the busiest thread's was 1.4-1.9: each of the ~100
parallel kernels per run paid a wake-up of a halted virtual CPU (the host schedules it),
tens of microseconds. onnxruntime spins likewise between its kernels."""

LINGER_NS = 10_000_000
"""Nanoseconds the workers keep spinning after a run of an entry point compiled for more
than one thread ends (`glow_pool_end`), as onnxruntime's do (~45 ms measured); during a
run they spin throughout. Overridden by the environment variable `GLOW_POOL_LINGER_MS`
(read when the pool is installed; 0: no spinning beyond SPIN_CYCLES, onnxruntime's
`session.intra_op.allow_spinning=0`), by `set_linger_ns`, and in an AOT bundle by a
program's own (strong) definition of `int64_t glow_pool_linger_ns`. Why: on this KVM
guest (quiet, load 0.6) the old pool (sleeping ~80 us after each kernel) ran ResNet-18 on
2 threads in 18.5 ms back to back but 23.2 / 28.8 / 35.7 ms (one thread's speed) with 10 /
50 / 200 ms idle before each run, a sleeping vCPU being slow to come back; workers spinning
~46 ms per wait gave 18-20.6 ms at every gap (CPU per run 36 -> 86 ms at 200 ms gaps).
Spinning through the run keeps that gain for any gap; the linger only spares the wake-up
at the run's start, so it is short. On a loaded machine (load ~10, other processes on
both cores) the spinning, yielding, changed nothing measurable (benchmark geomeans 1.00 /
1.06 with it, 0.90 / 1.14 without)."""

ENV_LINGER = "GLOW_POOL_LINGER_MS"

_lock = threading.Lock()
_engine = None
_linger_ns = LINGER_NS


def _global(name: str):
    import ctypes

    install()
    assert _engine is not None
    return ctypes.c_int64.from_address(_engine.get_global_value_address(name))


def set_linger_ns(ns: int) -> None:
    """How long (ns) the JIT's pool workers spin after a run, from the next run on (0: they
    spin through no run either)."""
    global _linger_ns
    if ns < 0:
        raise ValueError(f"the linger is a duration, not {ns}")
    _global("glow_pool_linger_ns").value = _linger_ns = int(ns)


def linger_ns() -> int:
    """The JIT's pool linger (ns) now."""
    return _global("glow_pool_linger_ns").value


def set_static_parts(on: bool) -> None:
    """Measuring aid (benchmarks): part w of every parallel loop runs on worker w, never
    claimed by another, so each thread's CPU time shows the split's balance even on a
    loaded machine (where the caller otherwise runs the parts of workers not yet
    scheduled). The numbers are the same either way."""
    _global("glow_pool_static").value = int(on)
    # no spinning either: a thread waiting would count spinning as CPU time
    _global("glow_pool_spin").value = 0 if on else SPIN_CYCLES
    _global("glow_pool_linger_ns").value = 0 if on else _linger_ns


def profile_regions(regions: int):
    """Measuring aid (benchmarks/pool_regions.py): from now on each part of a parallel
    region adds the CPU time of the thread running it (CLOCK_THREAD_CPUTIME_ID, what a
    loaded machine does not change) to a table, row r the r-th `glow_parallel_for` call
    since this call (1-based: row 0 stays empty), column the worker; returns that
    (regions + 1) x MAX_THREADS int64 array of ns, None for `regions` 0 (profiling off).
    Regions past `regions` are not recorded. The numbers a model computes do not change."""
    import ctypes

    import numpy as np

    install()
    assert _engine is not None
    prof = ctypes.c_void_p.from_address(_engine.get_global_value_address("glow_pool_prof"))
    if regions <= 0:
        prof.value = None
        _global("glow_pool_prof_regions").value = 0
        return None
    table = np.zeros((regions + 1, MAX_THREADS), np.int64)
    _profile_tables.append(table)  # kept alive while the runtime may write it
    _global("glow_pool_region").value = 0
    _global("glow_pool_prof_regions").value = regions + 1
    prof.value = table.ctypes.data
    return table


_profile_tables: list = []


def _linger_from_env() -> int | None:
    """`GLOW_POOL_LINGER_MS` in ns (None: unset or empty); a SettingError for a value that
    is not a finite number of milliseconds >= 0."""
    import math

    from glow_mlir.ir.errors import SettingError

    env = os.environ.get(ENV_LINGER)
    if not env:
        return None
    try:
        ms = float(env)
    except ValueError:
        ms = math.nan
    if not (math.isfinite(ms) and ms >= 0):
        raise SettingError(f"{ENV_LINGER}={env!r}: must be milliseconds, 0 or more "
                           f"(e.g. 10, or 0 for no spinning)")
    return int(ms * 1e6)


def install() -> None:
    """Compile the runtime once per process and make `glow_parallel_for` and
    `glow_clock_ns` known to every MCJIT engine made afterwards (`llvm.add_symbol`).
    A bad `GLOW_POOL_LINGER_MS` is a SettingError here, at every call until it is fixed
    (checked first: nothing is installed with it)."""
    global _engine
    env_ns = _linger_from_env()
    with _lock:
        if _engine is not None:
            return
        import llvmlite.binding as llvm

        from glow_mlir.targets.cpu.engine import host_cpu, jit_machine

        tm = jit_machine(*host_cpu())
        module = llvm.parse_assembly(runtime_ir(tm.triple))
        module.verify()
        engine = llvm.create_mcjit_compiler(module, tm)
        engine.finalize_object()
        for name in (PARALLEL_FOR, CLOCK_NS, CPU_CLOCK_NS, POOL_BEGIN, POOL_END):
            llvm.add_symbol(name, engine.get_function_address(name))
        _engine = engine
    if env_ns is not None:
        set_linger_ns(env_ns)
