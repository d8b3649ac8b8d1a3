"""Names of the native runtime the generated code calls (`targets/cpu/thread_pool.py`
defines it; `conversion/loops_to_llvm_ir/outlining.py` and the generators call it). Here, at the
bottom of the layers, because both sides need them and the load path of a saved model
imports neither xDSL nor the conversion layer."""

PARALLEL_FOR = "glow_parallel_for"
"""void glow_parallel_for(void (*chunk)(void *ctx, int64_t lo, int64_t hi, int64_t worker),
void *ctx, int64_t lo, int64_t hi, int64_t threads)."""
CLOCK_NS = "glow_clock_ns"
"""int64_t glow_clock_ns(void): CLOCK_MONOTONIC in nanoseconds (traced entry points)."""
CPU_CLOCK_NS = "glow_cpu_clock_ns"
"""int64_t glow_cpu_clock_ns(int32_t id): clock `id` in nanoseconds (traced entry points
read THREAD_CPU_CLOCK)."""
THREAD_CPU_CLOCK = 3
"""Linux's CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time."""
POOL_BEGIN = "glow_pool_begin"
"""void glow_pool_begin(int64_t threads): an entry point compiled for threads > 1 calls it
at its start (the pool's workers spin through the run, those asleep are woken)."""
POOL_END = "glow_pool_end"
"""void glow_pool_end(int64_t threads): ... and before it returns (the workers linger)."""
MAX_THREADS = 256
"""The most threads a model may be compiled for (the pool has room for as many)."""
