"""LLVM IR texts to object code through the compile cache (`targets/compile_cache.py`):
each object is keyed by sha256 of its IR text, the `CompileSpec` (CPU name and features,
relocation and code model, loop unrolling), the target triple, the versions of
glow-mlir, llvmlite and LLVM, and the source of `llvm_compile.py` (the O3 pipeline the
text goes through: a change there must not serve old code under the same version).
Only the texts not found are compiled, in parallel as `llvm_compile.compile_objects`
does; the result is the same objects in the same order either way.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Callable

from glow_mlir.ir import progress
from glow_mlir.targets import compile_cache
from glow_mlir.targets.compile_cache import CompileCache
from glow_mlir.targets.cpu.llvm_compile import CompileSpec, compile_objects


@functools.cache
def compiler_fingerprint() -> str:
    from glow_mlir.targets.cpu import llvm_compile

    with open(llvm_compile.__file__, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@functools.cache
def _environment() -> dict[str, str]:
    import llvmlite.binding as llvm

    return {**compile_cache.versions(), "triple": llvm.get_default_triple(),
            "compiler": compiler_fingerprint()}


def object_key(text: str, spec: CompileSpec) -> bytes:
    return compile_cache.make_key("object", {**_environment(),
                                             "spec": dataclasses.asdict(spec)}, text)


@dataclasses.dataclass
class CachedObjects:
    objects: list[bytes]  # in the order of the texts
    hits: int  # found in the cache
    misses: int  # compiled (and stored, if the cache is writable)
    jobs: int  # processes that compiled the misses


def compile_cached(texts: list[str], spec: CompileSpec, cache: CompileCache | None,
                   jobs_for: Callable[[list[str]], int]) -> CachedObjects:
    """The object of each text: from `cache` when there (None: no cache), else compiled
    by `jobs_for(texts to compile)` processes and stored. Hits and misses are counted
    in the compile's report (`progress.count`)."""
    if cache is None:
        jobs = jobs_for(texts)
        return CachedObjects(compile_objects(texts, spec, jobs), 0, len(texts), jobs)
    keys = [object_key(t, spec) for t in texts]
    rebuilt = cache.rebuilt
    found: list[bytes | None] = []
    for key in keys:
        payload = cache.get("objects", key)
        found.append(None if payload is None else bytes(payload))
    missing = [i for i, obj in enumerate(found) if obj is None]
    todo = [texts[i] for i in missing]
    jobs = jobs_for(todo) if todo else 0
    for i, obj in zip(missing, compile_objects(todo, spec, jobs) if todo else []):
        found[i] = obj
        cache.put("objects", keys[i], obj)
    if missing and cache.writable:
        cache.trim()
    hits = len(texts) - len(missing)
    progress.count("object cache hits", hits)
    progress.count("object cache misses", len(missing))
    if cache.rebuilt > rebuilt:
        progress.count("cache entries found bad and rebuilt", cache.rebuilt - rebuilt)
    return CachedObjects(found, hits, len(missing), jobs)  # type: ignore[arg-type]
