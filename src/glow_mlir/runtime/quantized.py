"""`compile(model, profile=P, quantization=QuantizationConfig(...))`: the graph pipeline
split around `quantize-graph` (Glow's optimizeFunction quantizes the lowered graph before
activations are fused):

    import -> check the profile's graph hash -> glow-graph-pipeline{phase=lower}
           -> quantize-graph -> glow-graph-pipeline{phase=finish} -> the backend

Quantized models run on `interpreter` and `cpu`. The accelerator's simulator has no int8
tiles yet, so `accel` is refused up front rather than failing inside its lowering.
The whole-model cache is skipped (its key does not cover a profile); the cpu backend's
per-kernel object cache still applies.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from glow_mlir.analysis.quant_profile import Profile, ProfileError
from glow_mlir.backends import get_backend
from glow_mlir.ir import progress as progress_hooks
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.gc_pause import paused_gc

QUANTIZED_BACKENDS = ("interpreter", "cpu", "accel")


def as_profile(profile: object) -> Profile:
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, (str, os.PathLike)):
        return Profile.load(profile)
    raise ProfileError(f"profile must be a glow_mlir.Profile or the path of a saved one, got "
                       f"{type(profile).__name__}")


FOLDED_INTO_BATCH_NORM = frozenset({"Conv", "Gemm"})
"""ONNX ops `fold-batchnorm` folds a following BatchNormalization into: the folded op
takes the batch norm's name (`transforms/graph/fold_batchnorm.py`)."""


def onnx_keep_float_aliases(model: object, config):
    """`config` with `keep_float_aliases` for an ONNX model: each keep_float name that is
    not an op kind, as the graph nodes it may stand for. The graph names an op by its
    first output (the importer takes name hints from the ONNX values;
    `analysis.quant_profile.edge_names`), so a node's own name (`NodeProto.name`, what
    Netron shows) stands for its first output, an op type (`Conv`) for every node of it,
    and a Conv or Gemm whose one consumer is a BatchNormalization also for that batch
    norm's output, which is the folded op's name when it was folded."""
    import dataclasses

    from onnx import ModelProto

    from glow_mlir.dialects.glow import ALL_OPS
    from glow_mlir.runtime.ir_models import is_mlir_path

    kinds = {c.name for c in ALL_OPS} | {c.name[5:] for c in ALL_OPS}
    names = [k for k in config.keep_float if k not in kinds]
    if not names:
        return config
    if isinstance(model, bytearray):
        model = bytes(model)
    if not isinstance(model, (ModelProto, bytes, str, os.PathLike)) or (
            not isinstance(model, (ModelProto, bytes)) and is_mlir_path(model)):
        return config  # a Caffe2 model or a model in IR: its names are the graph's
    from glow_mlir.frontends.onnx.builder import hint_name
    from glow_mlir.frontends.onnx.loading import load_model

    nodes = list(load_model(model)[0].graph.node)
    consumers: dict[str, list] = {}
    for n in nodes:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def stands_for(node) -> tuple[str, ...]:
        out = node.output[0]
        group = [hint_name(out)]
        after = consumers.get(out, [])
        if (node.op_type in FOLDED_INTO_BATCH_NORM and len(after) == 1
                and after[0].op_type == "BatchNormalization"):
            group.append(hint_name(after[0].output[0]))
        return tuple(group)

    by_output = {n.output[0]: n for n in nodes if n.output}
    by_name = {n.name: n for n in nodes if n.name and n.output}
    aliases = []
    for k in names:
        if k in by_output:
            groups: tuple[tuple[str, ...], ...] = (stands_for(by_output[k]),)
        elif k in by_name:
            groups = (stands_for(by_name[k]),)
        else:  # an op type, or nothing of this model (then the pass says so)
            groups = tuple(stands_for(n) for n in nodes if n.op_type == k and n.output)
        aliases.append((k, groups))
    return dataclasses.replace(config, keep_float_aliases=tuple(aliases))


def compile_quantized(model: object, backend: str, input_shapes: Mapping | None,
                      profile: object, quantization: object,
                      disable_passes: Sequence[str], verbose: bool, progress: bool | None,
                      cache: bool, backend_options: Mapping[str, object]):
    """The quantized compile (module docstring); a `CompiledModel` whose `quantization`
    attribute is the pass's `QuantizeReport`."""
    from glow_mlir.runtime.compiled_model import (
        CompiledModel,
        _import,
        optimize_graph,
        split_disabled,
    )
    from glow_mlir.targets import compile_cache
    from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig, quantize_function

    if profile is None:
        raise UserError("quantization needs a profile: record one with glow_mlir.profile("
                        "model, batches) and pass profile=...")
    config = quantization if quantization is not None else QuantizationConfig()
    if not isinstance(config, QuantizationConfig):
        raise UserError(f"quantization must be a glow_mlir.QuantizationConfig, got "
                        f"{type(config).__name__}")
    config = onnx_keep_float_aliases(model, config)
    target = get_backend(backend)
    if backend not in QUANTIZED_BACKENDS:
        raise UserError(f"quantized models run on {' or '.join(map(repr, QUANTIZED_BACKENDS))};"
                        f" backend '{backend}' has no int8 path yet")
    target.check_options(backend_options)
    options = target.keyed_options(backend_options)
    prof = as_profile(profile)
    graph_disable, instr_disable = split_disabled(disable_passes) if disable_passes else ((), ())
    with progress_hooks.recording(show=progress) as recorder:
        store = compile_cache.open_cache(cache)
        with compile_cache.using(store), paused_gc():
            module, is_graph = _import(model, input_shapes)
            if not is_graph:
                raise UserError("quantization needs a glow graph (an ONNX model or a glow "
                                "graph in IR), not a glow_ir program")
            prof.check_graph(module, "this model")
            reports = []
            optimize_graph(module, backend, graph_disable, between=lambda m: reports.append(
                quantize_function(m, prof, config, target)))
            report = reports[0]
            compiled = CompiledModel(module, backend, disable_passes=instr_disable,
                                     backend_options=options)
    compiled.quantization = report  # type: ignore[attr-defined]
    if verbose:
        recorder.print_report(sys.stderr)
        print(report.summary(), file=sys.stderr)
    return compiled
