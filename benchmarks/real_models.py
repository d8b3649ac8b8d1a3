"""A corpus of real architectures, exported from PyTorch to ONNX: nothing is downloaded.

Every torchvision classification model at 224x224 (`weights=None`, `torch.manual_seed(0)`,
eval mode; weights that start at zero, ViT's head and class token, get N(0, 0.02) instead, so
that the logits are not all zeros whatever a compiler does; batch norm takes its statistics
from 8 random images, so that activations neither vanish nor explode); torchvision's
segmentation models at 128x128 and two detection models with their post-processing at
320x320 (no pretrained backbone either); BERT-base, DistilBERT, GPT-2 and ViT-B/16, T5's
encoder and one step of its decoder, CLIP (text and vision towers, two images), Whisper's
encoder and wav2vec2, random-initialised from the default `transformers` configs (batch
1; 128 tokens; `SMALL` gives the small configurations the tests run). Each export is
cached on disk (`.cache/real_models/` at the top of the
repository, or `$GLOW_CORPUS_CACHE`), keyed by the model's name, the recipe number, the torch
(and transformers) version and the exporter, together with its example inputs and
onnxruntime's and PyTorch eager's outputs for them.

    from real_models import corpus, list_names
    for name, model, inputs in corpus(["resnet18", "bert"]):
        ...                          # onnx.ModelProto, {input name: numpy array}

    python benchmarks/real_models.py --list
    python benchmarks/real_models.py --only resnet18 bert --check interpreter cpu
    python benchmarks/real_models.py --only clip:small lraspp_mobilenet_v3_large --check cpu
    python benchmarks/real_models.py --only resnet18 gpt2:small --check torch-compile

`--check` compiles each model on each backend in a child process with a limit of CPU time (a
hang or a crash is counted, not fatal) and compares its outputs with onnxruntime's: the table
gives CPU seconds per stage (the child's and its compile workers'; compiled with the compile
cache off, so a compile is cold whatever an earlier run cached), the run's CPU time over
onnxruntime's first run in the same child ("x ort", one thread), max abs / max rel error
(relative to onnxruntime's largest magnitude), and the failures grouped by cause. The cpu
backend runs on one thread there, as onnxruntime does. A first run also pays first touches of
the weights and the arena: `--steady N` adds N later runs of each, alternating, and a
"steady" column (the fastest of ours over the fastest of onnxruntime's, CPU time) with its
geometric mean, the corpus' steady-state figure. `--json` keeps
the results; `--report` prints them again (several files merge, the later winning). Needs the
`corpus` extra (torch, torchvision, transformers, onnxscript): INSTALL_HINT below.

`--check torch-compile` exports nothing: in a child process (the same CPU-time limit) it
builds the torch module, runs it eagerly and under `torch.compile(m, backend="glow")` (glow's
cpu backend, compile cache off, one torch thread) on the same inputs, and a second table gives
the backend's counts (graphs, dynamo's graph breaks, partitions, ops compiled / left to
eager), the first compiled call's CPU seconds, a later call's CPU time over eager's, the errors
against eager, and the ops left to eager or, in one line, why torch.compile failed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = REPO / ".cache" / "real_models"
OPSET = 17
"""The legacy (TorchScript) exporter's opset; the dynamo exporter (torch 2.14) writes opset 20.
The legacy one fails on torchvision's ViTs (aten::_native_multi_head_attention) and on GPT-2
(aten::diff), so `exporter="auto"` falls back to dynamo for them."""
SEQ_LEN = 128
"""Tokens per example of the text models (batch 1)."""
IMAGE = (1, 3, 224, 224)
CALIBRATION_BATCH, CALIBRATION_BATCHES = 4, 2
"""Random images that set the batch-norm statistics of the torchvision models."""
TIME_LIMIT = 120.0
"""CPU seconds a check may take (import, compile and run of one model on one backend): CPU
time, not wall time, so a busy machine doesn't turn slow compiles into timeouts."""
WALL_FACTOR = 4
"""A check that waits (a hang) is stopped after this many times the limit of wall time."""
TOLERANCE = 1e-3
"""Largest relative error (max |glow - ort| / max |ort|) that counts as the right numbers."""
BACKENDS = ("interpreter", "cpu")
RECIPE = 2
KEY_LENGTH = 160
"""Longest cache key (file name stem) before a variant's overrides become a digest."""
"""Part of the cache key: bump it when what a model's export is made of changes (its
initialisation, inputs or export options)."""

INSTALL_HINT = """\
The real-model corpus needs PyTorch, torchvision, transformers and onnxscript (the `corpus` extra):

    pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu
    pip install -e ".[corpus]"

(CPU builds first: a plain `pip install torch` takes a CUDA build of several GB.)"""


class MissingTorch(ImportError):
    """torch (or torchvision) is not installed; the message says how to install it."""


def _torch(vision: bool = True):
    """torch and torchvision; without `vision`, torch and None (the transformers models
    need no torchvision, which the CI machine lacks)."""
    try:
        import torch

        torchvision = None
        if vision:
            import torchvision
    except ImportError as e:
        raise MissingTorch(f"{e}\n\n{INSTALL_HINT}") from None
    return torch, torchvision


# -- the models ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """One model of the corpus: `build()` gives the eval-mode torch module and its example
    inputs (name -> tensor, in the order of the module's arguments)."""

    name: str
    family: str  # "torchvision" or "transformers"
    build: Callable[[], tuple[object, dict[str, object]]]
    output_names: tuple[str, ...]

    def key(self) -> str:
        torch, _ = _torch(vision=self.family != "transformers")
        parts = [self.name, f"r{RECIPE}", f"torch{torch.__version__}"]
        if self.family == "transformers":
            import transformers

            parts.append(f"transformers{transformers.__version__}")
        key = re.sub(r"[^A-Za-z0-9_.=-]+", "_", "-".join(parts))
        if len(key) > KEY_LENGTH:
            # a variant with many overrides (a small CLIP sets a dozen) would make a file
            # name over the 255 bytes file systems allow: its name's digest stands in
            digest = hashlib.sha1(self.name.encode()).hexdigest()[:16]
            key = re.sub(r"[^A-Za-z0-9_.=-]+", "_",
                         "-".join([self.name.split("@")[0] + "@" + digest, *parts[1:]]))
        return key


def _torchvision_spec(name: str, image: tuple[int, ...] = IMAGE) -> ModelSpec:
    """`image`: the input's shape (the tests take a small one)."""
    def build():
        torch, torchvision = _torch()
        torch.manual_seed(0)
        model = torchvision.models.get_model(name, weights=None).eval()
        with torch.no_grad():
            for param in model.parameters():
                # ViT's head and class token start at zero: its logits would be all zeros
                # whatever the compiler did, so they get small random values instead
                if param.dim() > 1 and not param.any():
                    torch.nn.init.normal_(param, std=0.02)
        _calibrate_batch_norm(torch, model, image)
        x = torch.randn(*image, generator=torch.Generator().manual_seed(1))
        return model, {"input": x}

    return ModelSpec(name if image == IMAGE else f"{name}@{'x'.join(map(str, image))}",
                     "torchvision", build, ("logits",))


def _calibrate_batch_norm(torch, model, image: tuple[int, ...] = IMAGE) -> None:
    """Gives batch norm the statistics of a few random images instead of its initial mean 0,
    variance 1, which don't normalise anything: without this, the activations of a random
    GoogLeNet underflow to zero (its logits are its last bias) and EfficientNet's logits
    are 1e-14."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average over the calibration batches
    def calibrate():
        g = torch.Generator().manual_seed(2)
        with torch.no_grad():
            for _ in range(CALIBRATION_BATCHES):
                model(torch.randn(CALIBRATION_BATCH, *image[1:], generator=g))

    model.train()
    try:
        calibrate()
    except RuntimeError:
        # Inception v3's auxiliary classifier, run only in training, needs 299x299 images:
        # the batch norms alone in training mode
        model.eval()
        for m in norms:
            m.reset_running_stats()
            m.train()
        calibrate()
    model.eval()


class _HiddenStates:
    """Wraps a transformers model so the export has plain tensor outputs."""

    def __new__(cls, model, outputs: tuple[str, ...]):
        torch, _ = _torch(vision=False)

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *args):
                out = self.model(*args, return_dict=True)
                return tuple(out[k] for k in outputs)

        return Wrapper().eval()


def _transformers_spec(name: str, config_cls: str, model_cls: str, text: bool,
                       outputs: tuple[str, ...], with_mask: bool = True,
                       **config) -> ModelSpec:
    def build():
        torch, _ = _torch(vision=False)
        import transformers

        torch.manual_seed(0)
        cfg = getattr(transformers, config_cls)(**config)
        cfg._attn_implementation = "eager"  # plain MatMul/Softmax, whichever exporter
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        model = getattr(transformers, model_cls)(cfg).eval()
        g = torch.Generator().manual_seed(1)
        if text:
            ids = torch.randint(0, cfg.vocab_size, (1, SEQ_LEN), generator=g)
            inputs = {"input_ids": ids}
            if with_mask:
                mask = torch.ones(1, SEQ_LEN, dtype=torch.int64)
                mask[:, SEQ_LEN - SEQ_LEN // 8:] = 0  # some padding, so the mask matters
                inputs["attention_mask"] = mask
        else:
            size = cfg.image_size
            inputs = {"pixel_values": torch.randn(1, cfg.num_channels, size, size, generator=g)}
        return _HiddenStates(model, outputs), inputs

    return ModelSpec(name, "transformers", build, outputs)


TRANSFORMERS = {
    # BertConfig() is BERT-base: 12 layers, hidden 768, 12 heads.
    "bert": lambda **kw: _transformers_spec(
        _variant("bert", kw), "BertConfig", "BertModel", True,
        ("last_hidden_state", "pooler_output"), **kw),
    "distilbert": lambda **kw: _transformers_spec(
        _variant("distilbert", kw), "DistilBertConfig", "DistilBertModel", True,
        ("last_hidden_state",), **kw),
    "gpt2": lambda **kw: _transformers_spec(
        _variant("gpt2", kw), "GPT2Config", "GPT2Model", True, ("last_hidden_state",),
        with_mask=False, **kw),
    # ViTConfig() is ViT-B/16 at 224.
    "vit_b_16_hf": lambda **kw: _transformers_spec(
        _variant("vit_b_16_hf", kw), "ViTConfig", "ViTModel", False,
        ("last_hidden_state", "pooler_output"), **kw),
}


# -- segmentation and detection (torchvision) -------------------------------------------

DENSE_IMAGE = (1, 3, 128, 128)
"""The segmentation models' input: their heads upsample to it, so 224x224 would only make
the table slower."""
SEGMENTATION = ("fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large")
DETECTION = {
    "ssdlite320_mobilenet_v3_large": {},
    # 320x320 as given (its transform would resize to 800), and a score threshold under the
    # 0.01 its random head's prior gives every box: with 0.05 nothing is detected
    "retinanet_resnet50_fpn": {"min_size": 320, "max_size": 320, "score_thresh": 0.005},
}
"""The detection models with their post-processing (NMS), one 320x320 image, and the
options they are built with."""


class _Select:
    """Wraps a module whose output is a dict (segmentation) or a list of dicts (detection,
    one per image) so the export has plain tensor outputs."""

    def __new__(cls, model, keys: tuple[str, ...], detection: bool = False):
        torch, _ = _torch()

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, images):
                out = self.model(list(images))[0] if detection else self.model(images)
                return tuple(out[k] for k in keys)

        return Wrapper().eval()


DETECTION_KEYS = ("boxes", "scores", "labels")


def _dense_spec(name: str, detection: bool, config: dict | None = None) -> ModelSpec:
    keys = DETECTION_KEYS if detection else ("out",)
    options = {**(DETECTION[name] if detection else {}), **(config or {})}

    def build():
        torch, torchvision = _torch()
        torch.manual_seed(0)
        # no pretrained backbone either (the default would download it)
        model = torchvision.models.get_model(name, weights=None, weights_backbone=None,
                                             **options)
        _calibrate_batch_norm(torch, _BatchNormView(model, detection))
        image = (1, 3, 320, 320) if detection else DENSE_IMAGE
        x = torch.rand(*image, generator=torch.Generator().manual_seed(1))
        return _Select(model.eval(), keys, detection), {"images": x}

    return ModelSpec(_variant(name, config) if config else name,
                     "detection" if detection else "segmentation", build, keys)


class _BatchNormView:
    """What `_calibrate_batch_norm` needs of a detection model, which takes a list of
    images and, in training mode, targets: its modules, and a call in training mode that
    runs only the backbone (the batch norms are there)."""

    def __init__(self, model, detection: bool):
        self._model, self._detection = model, detection

    def modules(self):
        return self._model.modules()

    def train(self):
        self._model.train()

    def eval(self):
        self._model.eval()

    def __call__(self, x):
        return self._model.backbone(x) if self._detection else self._model(x)


# -- transformers models with their own inputs ------------------------------------------

def _module(forward):
    """A torch module whose forward is `forward(model, *inputs)`, plain tensors out."""
    torch, _ = _torch(vision=False)

    class Wrapper(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, *args):
            return forward(self.model, *args)

    return Wrapper


def _text_inputs(vocab: int, g, seq: int = SEQ_LEN) -> dict:
    torch, _ = _torch(vision=False)
    ids = torch.randint(0, vocab, (1, seq), generator=g)
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[:, seq - seq // 8:] = 0  # some padding, so the mask matters
    return {"input_ids": ids, "attention_mask": mask}


def _custom_spec(name: str, config_cls: str, model_cls: str, outputs: tuple[str, ...],
                 make: Callable, config: dict, **defaults) -> ModelSpec:
    """A transformers model built from `config_cls(**defaults, **config)` whose inputs and
    outputs `make(torch, model, cfg, generator)` gives: (forward(model, *inputs) -> tuple,
    inputs)."""
    def build():
        torch, _ = _torch(vision=False)
        import transformers

        torch.manual_seed(0)
        settings = {**defaults, **config}
        # eager by default: plain MatMul/Softmax, whichever exporter; "sdpa" is what
        # transformers picks when not told, torch's scaled_dot_product_attention
        attention = settings.pop("attn_implementation", "eager")
        cfg = getattr(transformers, config_cls)(**_nest(settings))
        cfg._attn_implementation = attention
        for sub in ("text_config", "vision_config"):
            if hasattr(cfg, sub):
                getattr(cfg, sub)._attn_implementation = attention
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        model = getattr(transformers, model_cls)(cfg).eval()
        forward, inputs = make(torch, model, cfg, torch.Generator().manual_seed(1))
        return _module(forward)(model).eval(), inputs

    return ModelSpec(_variant(name, config), "transformers", build, outputs)


def _nest(config: dict) -> dict:
    """`text_X=v`/`vision_X=v` overrides (CLIP's) go into `text_config`/`vision_config`
    (merged with one given whole), so that a variant's name stays flat:
    `make_spec("clip", text_num_hidden_layers=2)`."""
    towers = ("text_config", "vision_config")
    out = {k: dict(v) if k in towers else v for k, v in config.items()
           if not (k.startswith(("text_", "vision_")) and k not in towers)}
    for key, value in config.items():
        tower, _, rest = key.partition("_")
        if key not in towers and tower in ("text", "vision"):
            out.setdefault(f"{tower}_config", {})[rest] = value
    return out


def _t5_encoder(torch, model, cfg, g):
    return (lambda m, ids, mask: (m(input_ids=ids, attention_mask=mask).last_hidden_state,),
            _text_inputs(cfg.vocab_size, g))


T5_DECODER_STEPS = 4
"""Tokens the decoder has produced so far: one decoder step (no cache) over them."""


def _t5_decoder(torch, model, cfg, g):
    """One step of the decoder: the encoder's output (an input here), the decoder's tokens
    so far; the next token's logits."""
    enc = torch.randn(1, SEQ_LEN, cfg.d_model, generator=g)
    mask = _text_inputs(cfg.vocab_size, g)["attention_mask"]
    dec = torch.randint(0, cfg.vocab_size, (1, T5_DECODER_STEPS), generator=g)

    def forward(m, decoder_input_ids, encoder_hidden_states, encoder_attention_mask):
        return (m(decoder_input_ids=decoder_input_ids,
                  encoder_outputs=(encoder_hidden_states,),
                  attention_mask=encoder_attention_mask).logits[:, -1],)

    return forward, {"decoder_input_ids": dec, "encoder_hidden_states": enc,
                     "encoder_attention_mask": mask}


T5_CACHED = 8
"""Tokens in the self-attention cache of the cached decoder step."""


def _t5_cached_decoder(torch, model, cfg, g):
    """One step of the decoder as generation runs it: one new token, the keys and values of
    the earlier ones and of the encoder's output (the cross-attention's) as inputs, the
    next token's logits and the self-attention's grown cache as outputs."""
    from transformers.cache_utils import DynamicCache, EncoderDecoderCache

    layers, heads, d_kv = cfg.num_decoder_layers, cfg.num_heads, cfg.d_kv

    def forward(m, decoder_input_ids, encoder_attention_mask, *past):
        self_cache, cross_cache = DynamicCache(), DynamicCache()
        for i in range(layers):
            self_cache.update(past[4 * i], past[4 * i + 1], i)
            cross_cache.update(past[4 * i + 2], past[4 * i + 3], i)
        # the cross-attention reads its cache: the encoder's output only gives a shape
        encoder = past[2].new_zeros(1, past[2].shape[2], cfg.d_model)
        out = m(decoder_input_ids=decoder_input_ids, encoder_outputs=(encoder,),
                attention_mask=encoder_attention_mask,
                past_key_values=EncoderDecoderCache(self_cache, cross_cache), use_cache=True)
        grown = out.past_key_values.self_attention_cache.layers
        return (out.logits[:, -1], *(t for layer in grown for t in (layer.keys, layer.values)))

    inputs = {"decoder_input_ids": torch.randint(0, cfg.vocab_size, (1, 1), generator=g),
              "encoder_attention_mask": _text_inputs(cfg.vocab_size, g)["attention_mask"]}
    for i in range(layers):
        for kind, length in (("self", T5_CACHED), ("cross", SEQ_LEN)):
            for kv in ("key", "value"):
                inputs[f"{kind}_{kv}_{i}"] = torch.randn(1, heads, length, d_kv, generator=g)
    return forward, inputs


def _t5_cached_outputs(layers: int) -> tuple[str, ...]:
    return ("logits", *(f"present_{kv}_{i}" for i in range(layers) for kv in ("key", "value")))


def _clip(torch, model, cfg, g):
    text = _text_inputs(cfg.text_config.vocab_size, g, cfg.text_config.max_position_embeddings)
    size = cfg.vision_config.image_size
    pixels = torch.randn(2, cfg.vision_config.num_channels, size, size, generator=g)

    def forward(m, input_ids, attention_mask, pixel_values):
        out = m(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values)
        return out.logits_per_image, out.text_embeds, out.image_embeds

    return forward, {**text, "pixel_values": pixels}


def _whisper_encoder(torch, model, cfg, g):
    frames = 2 * cfg.max_source_positions  # the encoder takes exactly this many
    features = torch.randn(1, cfg.num_mel_bins, frames, generator=g)
    return (lambda m, x: (m.get_encoder()(x).last_hidden_state,),
            {"input_features": features})


WAV2VEC2_SAMPLES = 16000
"""One second of 16 kHz audio."""


def _wav2vec2(torch, model, cfg, g):
    audio = torch.randn(1, WAV2VEC2_SAMPLES, generator=g)
    return (lambda m, x: (m(x).last_hidden_state,), {"input_values": audio})


TRANSFORMERS.update({
    # T5Config() is t5-small: 6 layers, d_model 512, 8 heads
    "t5_encoder": lambda **kw: _custom_spec(
        "t5_encoder", "T5Config", "T5EncoderModel", ("last_hidden_state",), _t5_encoder, kw),
    "t5_decoder_step": lambda **kw: _custom_spec(
        "t5_decoder_step", "T5Config", "T5ForConditionalGeneration", ("logits",), _t5_decoder,
        kw),
    "t5_decoder_cached_step": lambda **kw: _custom_spec(
        "t5_decoder_cached_step", "T5Config", "T5ForConditionalGeneration",
        _t5_cached_outputs(kw.get("num_decoder_layers", kw.get("num_layers", 6))),
        _t5_cached_decoder, kw),
    # CLIPConfig(): ViT-B/32 at 224 and a 12-layer text tower over 77 tokens; two images
    "clip": lambda **kw: _custom_spec(
        "clip", "CLIPConfig", "CLIPModel", ("logits_per_image", "text_embeds", "image_embeds"),
        _clip, kw),
    # WhisperConfig(): 4 encoder layers, d_model 384, 6 heads, 80 mel bins x 3000 frames
    "whisper_encoder": lambda **kw: _custom_spec(
        "whisper_encoder", "WhisperConfig", "WhisperForConditionalGeneration",
        ("last_hidden_state",), _whisper_encoder, kw),
    # Wav2Vec2Config() is wav2vec2-base: 7 conv layers, 12 transformer layers, hidden 768
    "wav2vec2": lambda **kw: _custom_spec(
        "wav2vec2", "Wav2Vec2Config", "Wav2Vec2Model", ("last_hidden_state",), _wav2vec2, kw),
})


_TINY_T5 = dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=100)
SMALL: dict[str, dict] = {
    "bert": dict(num_hidden_layers=2),
    "t5_encoder": _TINY_T5,
    "t5_decoder_step": {**_TINY_T5, "num_decoder_layers": 2},
    "t5_decoder_cached_step": {**_TINY_T5, "num_decoder_layers": 2},
    "clip": dict(text_hidden_size=64, text_intermediate_size=128, text_num_hidden_layers=2,
                 text_num_attention_heads=4, text_vocab_size=100,
                 text_max_position_embeddings=16, vision_hidden_size=64,
                 vision_intermediate_size=128, vision_num_hidden_layers=2,
                 vision_num_attention_heads=4, vision_image_size=64, vision_patch_size=16,
                 projection_dim=32),
    # the special tokens within the small vocabulary (the default pad token is 50257)
    "whisper_encoder": dict(d_model=64, encoder_layers=2, decoder_layers=1,
                            encoder_attention_heads=4, decoder_attention_heads=4,
                            encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=64,
                            vocab_size=100, max_target_positions=32, pad_token_id=0,
                            bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
    # seven conv layers of 32 channels, not 512: the feature encoder is most of the work
    "wav2vec2": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, conv_dim=(32,) * 7, num_conv_pos_embeddings=16,
                     num_conv_pos_embedding_groups=4),
    # 5 classes, not 91 (the post-processing is one TopK per class), and fewer candidates
    # per class and detections: the NMS of the interpreter is quadratic, in Python
    "ssdlite320_mobilenet_v3_large": dict(num_classes=5, topk_candidates=40,
                                          detections_per_img=50),
    # what the torch.compile test tier runs (`--check torch-compile`)
    "distilbert": dict(n_layers=2, dim=64, hidden_dim=128, n_heads=4),
    "gpt2": dict(n_layer=2, n_embd=64, n_head=4),
    "vit_b_16_hf": dict(num_hidden_layers=2, hidden_size=64, intermediate_size=128,
                        num_attention_heads=4, image_size=64),
}
"""Small configurations of the transformers models, the ones the test tier runs (2 layers,
hidden 64), and of the detection models (a few classes and detections):
`make_spec(name, small=True)`, `--only NAME:small`."""


def _variant(name: str, config: dict) -> str:
    return name + "".join(f"@{k}={v}" for k, v in sorted(config.items()))


def make_spec(name: str, small: bool = False, **config) -> ModelSpec:
    """The spec of a corpus model; a transformers model takes config overrides
    (`make_spec("bert", num_hidden_layers=2)`), which become part of its name, and
    `small=True` starts from its `SMALL` configuration."""
    if small:
        if name not in SMALL:
            raise ValueError(f"{name!r} has no small configuration (those that do: "
                             f"{', '.join(SMALL)})")
        config = {**SMALL[name], **config}
    if name in TRANSFORMERS:
        return TRANSFORMERS[name](**config)
    if name in DETECTION:
        return _dense_spec(name, True, config)
    if name in SEGMENTATION and not config:
        return _dense_spec(name, False)
    if config:
        raise ValueError(f"only the transformers and detection models take config overrides, "
                         f"not {name!r}")
    if name not in _torchvision_names():
        raise KeyError(f"{name!r} is not in the corpus (see --list)")
    return _torchvision_spec(name)


def _torchvision_names() -> list[str]:
    _, torchvision = _torch()
    return sorted(torchvision.models.list_models(module=torchvision.models))


def list_names() -> list[str]:
    """Every model of the corpus: the torchvision classification models, then the
    transformers ones."""
    return _torchvision_names() + [*SEGMENTATION, *DETECTION] + list(TRANSFORMERS)


# -- export and cache ------------------------------------------------------------------------

def cache_dir(path: str | os.PathLike | None = None) -> Path:
    d = Path(path or os.environ.get("GLOW_CORPUS_CACHE") or DEFAULT_CACHE)
    d.mkdir(parents=True, exist_ok=True)
    return d


@dataclasses.dataclass
class Entry:
    """A model exported and cached: its ONNX file, its inputs and onnxruntime's outputs."""

    name: str
    onnx_path: Path
    data_path: Path  # npz: in:<name> the inputs, out:<i> onnxruntime's outputs
    meta: dict


def _paths(d: Path, spec: ModelSpec, exporter: str) -> tuple[Path, Path, Path]:
    stem = f"{spec.key()}-{exporter}"
    return d / f"{stem}.onnx", d / f"{stem}.npz", d / f"{stem}.json"


def _export(spec: ModelSpec, path: Path,
            exporter: str) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Write `spec`'s ONNX file; its example inputs and torch's outputs for them."""
    torch, _ = _torch(vision=spec.family != "transformers")
    model, inputs = spec.build()
    args = tuple(inputs.values())
    kw = dict(input_names=list(inputs), output_names=list(spec.output_names))
    # the exporters' warnings and progress lines would drown the table: stderr, and quiet
    with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        if exporter == "legacy":
            torch.onnx.export(model, args, str(path), dynamo=False, opset_version=OPSET,
                              do_constant_folding=True, **kw)
        else:
            torch.onnx.export(model, args, str(path), dynamo=True, external_data=False,
                              verbose=False, **kw)
        out = model(*args)
    outs = [out] if isinstance(out, torch.Tensor) else list(out)
    return {k: v.numpy() for k, v in inputs.items()}, [o.numpy() for o in outs]


def export(spec: ModelSpec, cache: str | os.PathLike | None = None,
           exporter: str = "auto") -> Entry:
    """Export `spec` to ONNX (unless cached), with its example inputs and onnxruntime's
    outputs. `exporter`: "legacy" (TorchScript), "dynamo" (torch.export), or "auto" (legacy,
    then dynamo if it fails)."""
    d = cache_dir(cache)
    order = {"auto": ("legacy", "dynamo"), "legacy": ("legacy",), "dynamo": ("dynamo",)}[exporter]
    errors = []
    for kind in order:
        onnx_path, data_path, meta_path = _paths(d, spec, kind)
        if onnx_path.exists() and data_path.exists() and meta_path.exists():
            return Entry(spec.name, onnx_path, data_path, json.loads(meta_path.read_text()))
    for kind in order:
        onnx_path, data_path, meta_path = _paths(d, spec, kind)
        start = time.perf_counter()
        try:
            feeds, torch_outputs = _export(spec, onnx_path, kind)
        except Exception as e:  # noqa: BLE001 - try the next exporter, report all
            errors.append(f"{kind}: {type(e).__name__}: {_first_line(e)}")
            continue
        seconds = time.perf_counter() - start
        outputs = _onnxruntime(onnx_path, feeds)
        import onnx

        proto = onnx.load(str(onnx_path), load_external_data=False)
        ops = Counter(n.op_type for n in _all_nodes(proto.graph))
        meta = {"name": spec.name, "exporter": kind, "export_s": round(seconds, 2),
                "opset": {o.domain or "ai.onnx": o.version for o in proto.opset_import},
                "nodes": len(proto.graph.node), "op_types": dict(sorted(ops.items())),
                "inputs": {k: [list(v.shape), str(v.dtype)] for k, v in feeds.items()},
                "outputs": [[list(o.shape), str(o.dtype)] for o in outputs],
                "reference_finite": bool(all(np.isfinite(o).all() for o in outputs)),
                "onnxruntime_vs_torch": compare(outputs, torch_outputs),
                "reference_max_abs": [float(np.abs(o).max()) if o.size else 0.0
                                      for o in outputs],
                "bytes": onnx_path.stat().st_size, "previous_errors": errors}
        np.savez(data_path, **{f"in:{k}": v for k, v in feeds.items()},
                 **{f"out:{i}": o for i, o in enumerate(outputs)},
                 **{f"torch:{i}": o for i, o in enumerate(torch_outputs)})
        meta_path.write_text(json.dumps(meta, indent=1))
        return Entry(spec.name, onnx_path, data_path, meta)
    raise RuntimeError(f"export of {spec.name} failed: " + "; ".join(errors))


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(g)


def _onnxruntime(path: Path, feeds: dict) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def load_data(entry: Entry) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """The example inputs and onnxruntime's outputs of an exported model."""
    with np.load(entry.data_path) as data:
        inputs = {k[3:]: data[k] for k in data.files if k.startswith("in:")}
        outs = sorted((int(k[4:]), data[k]) for k in data.files if k.startswith("out:"))
    return inputs, [o for _, o in outs]


def load_torch_outputs(entry: Entry) -> list[np.ndarray] | None:
    """PyTorch eager's outputs for the example inputs (None for an export cached before they
    were kept)."""
    with np.load(entry.data_path) as data:
        outs = sorted((int(k[6:]), data[k]) for k in data.files if k.startswith("torch:"))
    return [o for _, o in outs] or None


def corpus(names: Iterable[str | ModelSpec] | None = None,
           cache: str | os.PathLike | None = None,
           exporter: str = "auto") -> Iterator[tuple[str, object, dict[str, np.ndarray]]]:
    """(name, onnx.ModelProto, example inputs) for each model of `names` (all by default;
    a name or a `make_spec(...)`), exported on first use and cached."""
    import onnx

    for name in (list_names() if names is None else names):
        spec = name if isinstance(name, ModelSpec) else make_spec(name)
        entry = export(spec, cache, exporter)
        inputs, _ = load_data(entry)
        yield spec.name, onnx.load(str(entry.onnx_path)), inputs


# -- checking on a backend -------------------------------------------------------------------

def detection_order(outputs: list[np.ndarray]) -> list[np.ndarray]:
    """Detections (boxes, scores, labels) in one order: by label, then box. Two detections
    whose scores differ in the last bit may come in either order from a sort by score (a
    compiler's softmax rounds differently); the set of detections is what must match."""
    boxes, scores, labels = outputs
    order = np.lexsort((*boxes.T[::-1], labels))
    return [boxes[order], scores[order], labels[order]]


def compare(got: list[np.ndarray], expected: list[np.ndarray],
            detections: bool = False, reference: str = "onnxruntime") -> dict:
    """Max absolute error and max relative error (to the reference's largest magnitude) over
    all outputs, or a shape/dtype mismatch. `detections`: the outputs are a detection
    model's (boxes, scores, labels), compared as sets (`detection_order`)."""
    if len(got) != len(expected):
        return {"mismatch": f"{len(got)} outputs, {reference} gives {len(expected)}"}
    if detections and len(got) == 3 and all(g.shape[:1] == e.shape[:1]
                                            for g, e in zip(got, expected)):
        got, expected = detection_order(list(got)), detection_order(list(expected))
    abs_err = rel_err = 0.0
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        if g.shape != e.shape:
            return {"mismatch": f"output {i}: shape {g.shape}, {reference} {e.shape}"}
        d = np.abs(g.astype(np.float64) - e.astype(np.float64))
        a = float(d.max()) if d.size else 0.0
        scale = float(np.abs(e).max()) if e.size else 0.0
        if not np.isfinite(a):
            a = float("inf")
        abs_err = max(abs_err, a)
        rel_err = max(rel_err, a / scale if scale > 0 else a)
    return {"max_abs": abs_err, "max_rel": rel_err}


def _child(onnx_path: str, data_path: str, backend: str, steady: str = "0") -> None:
    """Runs in a child process: one JSON line per stage on stdout, so a parent that kills
    it for taking too long still knows how far it got. `steady` > 0: that many later runs of
    ours and onnxruntime's, alternating (the "steady" stage)."""
    def emit(**kw):
        print("@@" + json.dumps(kw), flush=True)

    entry = Entry("", Path(onnx_path), Path(data_path), {})
    stage = "import"
    try:
        import onnx

        import glow_mlir
        from glow_mlir.frontends.onnx import import_onnx

        proto = onnx.load(onnx_path)
        t, c = time.perf_counter(), _cpu_seconds()
        module = import_onnx(proto)
        emit(stage="import", seconds=time.perf_counter() - t, cpu=_cpu_seconds() - c)
        stage = "compile"
        t, c = time.perf_counter(), _cpu_seconds()
        # cold (no cache); one thread on cpu, as onnxruntime's reference runs
        options = {"num_threads": 1} if backend == "cpu" else {}
        compiled = glow_mlir.compile(module, backend=backend, cache=False, **options)
        emit(stage="compile", seconds=time.perf_counter() - t, cpu=_cpu_seconds() - c)
        inputs, expected = load_data(entry)
        stage = "run"
        t, c = time.perf_counter(), _cpu_seconds()
        got = compiled.run({n: inputs[n] for n in compiled.input_names})
        emit(stage="run", seconds=time.perf_counter() - t, cpu=_cpu_seconds() - c)
        detections = tuple(o.name for o in proto.graph.output) == DETECTION_KEYS
        emit(stage="compare", **compare(got, expected, detections))
        try:
            session = _onnxruntime_session(onnx_path)
            feeds = {k: v for k, v in inputs.items()
                     if k in {i.name for i in session.get_inputs()}}
            emit(stage="onnxruntime", **_cpu_timed(lambda: session.run(None, feeds)))
        except Exception:  # noqa: BLE001 - only the yardstick: the table shows "-"
            session = None
        if int(steady) > 0 and session is not None:
            stage = "steady"
            ours_feeds = {n: inputs[n] for n in compiled.input_names}
            emit(stage="steady", **_steady_times(lambda: compiled.run(ours_feeds),
                                                 lambda: session.run(None, feeds),
                                                 int(steady)))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        emit(stage="error", type=type(e).__name__, message=_summary(e), where=_where(e),
             failed_in=stage)
        sys.exit(3)


def _onnxruntime_session(onnx_path: str):
    """onnxruntime's session on one thread, as the reference outputs were made: the run
    time's yardstick (built untimed, as the compile is not in "run s")."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])


def _cpu_timed(run: Callable[[], object]) -> dict:
    """Seconds, wall and CPU, of one call."""
    t, c = time.perf_counter(), _cpu_seconds()
    run()
    return {"seconds": time.perf_counter() - t, "cpu": _cpu_seconds() - c}


def _steady_times(ours: Callable[[], object], theirs: Callable[[], object], runs: int) -> dict:
    """The fastest of `runs` later runs of each, CPU time, alternating ours and theirs so
    that a busy spell of a shared machine falls on both: the steady-state ratio, where the
    first run's also pays first touches of weights and arena."""
    best_ours = best_theirs = float("inf")
    for _ in range(runs):
        best_ours = min(best_ours, _thread_cpu_timed(ours))
        best_theirs = min(best_theirs, _thread_cpu_timed(theirs))
    return {"ours_cpu": best_ours, "ort_cpu": best_theirs, "runs": runs}


def _thread_cpu_timed(run: Callable[[], object]) -> float:
    """CPU seconds of one call by this thread's clock: both run on it here (one thread
    each). Not the process's: `os.times()` counts 10 ms ticks, and under the child's
    RLIMIT_CPU the kernel's process clock is the group timer, which lags the running
    thread by up to a tick (onnxruntime's 4 ms runs read 0 or 4 ms)."""
    c = time.thread_time()
    run()
    return time.thread_time() - c


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children: the cpu backend compiles
    its kernels in worker processes (`targets/cpu/llvm_compile.py`), which
    `time.process_time()` leaves out."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _summary(e: BaseException) -> str:
    """The message; for the importer's list of unsupported things, one short line per kind
    (what, how many times, why) without the node names, so that none is cut off."""
    entries = getattr(e, "entries", None)
    if not entries:
        return str(e)
    kinds = Counter((x.what, re.sub(r"'[^']*'", "'...'", x.why)) for x in entries)
    return "unsupported: " + "; ".join(f"{what} x{n} ({why})" for (what, why), n in kinds.items())


def _where(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if "glow_mlir" in f.filename] or frames
    f = ours[-1] if ours else None
    return f"{Path(f.filename).name}:{f.lineno} ({f.name})" if f else ""


def check(entry: Entry, backend: str, time_limit: float = TIME_LIMIT, steady: int = 0) -> dict:
    """Import, compile and run `entry` on `backend` in a child process; the stages it got
    through, their seconds, the errors against onnxruntime, or why it failed; with `steady`
    > 0 also the fastest of that many later runs against onnxruntime's (`steady_ratio`)."""
    result, returncode, err = _run_child(
        ["--_child", str(entry.onnx_path), str(entry.data_path), backend, str(steady)],
        time_limit, ("import", "compile", "run", "compare"))
    result["backend"] = backend
    if result.get("status") == "timeout":
        pass
    elif "type" in result:
        result["status"] = "error"
        lines = [s.strip() for s in result["message"].splitlines() if s.strip()]
        result["message"] = f"{result['type']}: {' / '.join(lines)}"[:600]
    else:
        _judge(result, returncode, err)
    if result.get("ort_cpu") and result.get("ours_cpu"):
        result["steady_ratio"] = result["ours_cpu"] / result["ort_cpu"]
    result["cause"] = cause(result)
    return result


def _judge(result: dict, returncode: int, err: str) -> None:
    """Status and message of a child that neither timed out nor reported an error: a
    crash (no comparison came back), wrong (a mismatch, or an error above TOLERANCE)
    or ok."""
    if returncode != 0 or "max_abs" not in result and "mismatch" not in result:
        result["status"] = "crash"
        tail = (err.strip().splitlines() or [""])[-1]
        result["message"] = f"exit code {returncode}: {tail[:200]}"
    elif "mismatch" in result:
        result["status"], result["message"] = "wrong", result["mismatch"]
    else:
        ok = result["max_rel"] <= TOLERANCE
        result["status"] = "ok" if ok else "wrong"
        if not ok:
            result["message"] = f"max rel error {result['max_rel']:.2g} > {TOLERANCE:g}"


def _run_child(args: list[str], time_limit: float,
               stages: tuple[str, ...]) -> tuple[dict, int, str]:
    """Runs this script with `args` in a child process under a limit of `time_limit` CPU
    seconds (and `WALL_FACTOR` times that of wall time); its JSON lines merged into one dict
    (`<stage>_s` and `<stage>_cpu_s` for a timed stage, the other keys as given), with
    `status` "timeout" and a message naming the stage it was in if it was stopped. Also the
    exit code and stderr."""
    cmd = [sys.executable, __file__, *args]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "src")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    start = time.perf_counter()

    def limit_cpu():
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (int(time_limit) + 1, int(time_limit) + 2))

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True, preexec_fn=limit_cpu)
    try:
        out, err = proc.communicate(timeout=WALL_FACTOR * time_limit)
        timed_out = proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
        limit = "CPU"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out, limit = True, "wall"
    result: dict = {"wall_s": time.perf_counter() - start}
    for line in out.splitlines():
        if line.startswith("@@"):
            rec = json.loads(line[2:])
            stage = rec.pop("stage")
            if "seconds" in rec:  # a timed stage; onnxruntime's run is the reference time
                key = "ort_run" if stage == "onnxruntime" else stage
                result[f"{key}_s"] = rec.pop("seconds")
                result[f"{key}_cpu_s"] = rec.pop("cpu")
            result.update(rec)
    if timed_out:
        stage = next((s for s in stages if f"{s}_s" not in result and s not in result),
                     stages[-1])
        result["status"] = "timeout"
        result["message"] = (f"over {time_limit:.0f} s of CPU time in {stage}" if limit == "CPU"
                             else f"over {WALL_FACTOR * time_limit:.0f} s of wall time in {stage}")
    return result, proc.returncode, err


# -- torch.compile -----------------------------------------------------------------------

TORCH_COMPILE = "torch-compile"
"""The `--check` that runs the torch module itself under `torch.compile(m, backend="glow")`
(glow's cpu backend, compile cache off) and compares it with eager: no ONNX export."""
REPEATS = 3
"""Calls timed of eager and of the compiled module after the first: the fastest counts."""
COMPILE_STAGES = ("build", "eager", "compile", "run", "compare")


def torch_compile_check(spec: ModelSpec, emit: Callable[..., None] = lambda **kw: None,
                        options: dict | None = None) -> dict:
    """Builds `spec`'s module, runs it eagerly, then compiled by torch.compile with the glow
    backend, on the same example inputs (no grad, one torch thread, so that CPU times
    compare); what it found: the backend's counts (graphs, graph breaks, partitions, ops
    compiled and left to eager, failed partition compiles), the first call's CPU seconds
    (dynamo's trace, glow's compiles and one run: `compile`), the fastest later call's
    against eager's (`run_ratio`), the errors against eager. `emit(stage=..., ...)` gets
    each stage as it ends (the child's JSON lines). A failure raises."""
    torch, _ = _torch(vision=False)  # build() imports torchvision if it needs it
    import glow_mlir

    torch.set_num_threads(1)
    result: dict = {}

    def stage(name: str, fn: Callable[[], object]) -> object:
        t, c = time.perf_counter(), _cpu_seconds()
        out = fn()
        result[f"{name}_s"], result[f"{name}_cpu_s"] = time.perf_counter() - t, _cpu_seconds() - c
        emit(stage=name, seconds=result[f"{name}_s"], cpu=result[f"{name}_cpu_s"])
        return out

    model, inputs = stage("build", spec.build)
    args = tuple(inputs.values())

    def fastest(fn) -> tuple[object, float]:
        # process_time: os.times() counts in ticks of 10 ms, too coarse for a small model's
        # call; a call runs no worker process
        best, out = float("inf"), None
        for _ in range(REPEATS):
            c = time.process_time()
            out = fn(*args)
            best = min(best, time.process_time() - c)
        return out, best

    backend = glow_mlir.torch_backend  # what backend="glow" names (the entry point)
    torch._dynamo.reset()
    backend.reset_stats()
    with torch.no_grad():
        expected, eager_s = stage("eager", lambda: fastest(model))
        compiled = torch.compile(model, backend=backend,
                                 options={"cache": False, **(options or {})})
        stage("compile", lambda: compiled(*args))
        got, run_s = stage("run", lambda: fastest(compiled))
    stats = backend.stats()
    counts = {k: stats[k] for k in ("graphs", "graph_breaks", "partitions", "ops_glow",
                                    "ops_eager", "eager_ops", "glow_calls", "eager_calls")}
    counts["compile_failures"] = [_first_line(m) for m in stats["compile_failures"]]
    counts["eager_call_cpu_s"], counts["compiled_call_cpu_s"] = eager_s, run_s
    counts["run_ratio"] = run_s / eager_s if eager_s > 0 else float("inf")
    emit(stage="stats", **counts)
    result.update(counts)
    as_list = lambda out: [out] if isinstance(out, torch.Tensor) else list(out)  # noqa: E731
    errors = compare([o.numpy() for o in as_list(got)], [o.numpy() for o in as_list(expected)],
                     tuple(spec.output_names) == DETECTION_KEYS, reference="eager")
    emit(stage="compare", **errors)
    result.update(errors)
    return result


def _compile_child(name: str) -> None:
    """Runs in a child process: `torch_compile_check` of corpus model `name` (NAME:small for
    a small configuration), one JSON line per stage on stdout."""
    stdout = sys.stdout  # the stages' lines, not redirected below

    def emit(**kw):
        print("@@" + json.dumps(kw), flush=True, file=stdout)

    base = name.removesuffix(":small")
    try:
        # dynamo's and the exporter's warnings and progress would drown the JSON lines
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            torch_compile_check(make_spec(base, small=base != name), emit)
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        emit(stage="error", type=type(e).__name__, message=_compile_error(e), where=_where(e))
        sys.exit(3)


def _compile_error(e: BaseException) -> str:
    """One line: dynamo wraps what failed inside it (BackendCompilerFailed, ...), with a
    long message of hints: the innermost cause's first line."""
    # BackendCompilerFailed keeps the backend's error as `inner_exception`, not a cause
    while (inner := getattr(e, "inner_exception", None) or e.__cause__) is not None \
            and inner is not e:
        e = inner
    return f"{type(e).__name__}: {_first_line(_summary(e))}"


def check_torch_compile(name: str, time_limit: float = TIME_LIMIT) -> dict:
    """`torch_compile_check` of corpus model `name` in a child process with a limit of CPU
    time: its counts, seconds and errors against eager, or why it failed (one line)."""
    result, returncode, err = _run_child(["--_compile_child", name], time_limit,
                                         COMPILE_STAGES)
    result["backend"] = TORCH_COMPILE
    failed_in = next((s for s in COMPILE_STAGES if f"{s}_cpu_s" not in result
                      and s != "compare"), "compare")
    if result.get("status") == "timeout":
        pass
    elif "type" in result:
        result["status"], result["failed_in"] = "error", failed_in
        result["message"] = f"{result['message']} (in {failed_in})"[:300]
    else:
        _judge(result, returncode, err)
    result["cause"] = cause(result)
    return result


def cause(result: dict) -> str:
    """What kind of failure a check is: unsupported op, importer bug, compile error, run
    error, wrong numbers, timeout, crash (or ok)."""
    status = result.get("status")
    if status in ("ok", "wrong", "crash"):
        return {"ok": "ok", "wrong": "wrong numbers", "crash": "crash"}[status]
    if status == "timeout":
        return "timeout"
    stage = result.get("failed_in", "import")
    if result.get("type") == "UnsupportedOnnxError":
        return "unsupported op"
    if result.get("backend") == TORCH_COMPILE:
        return {"build": "build error", "eager": "eager error"}.get(
            stage, "torch.compile error")
    return {"import": "importer bug", "compile": "compile error", "run": "run error"}[stage]


def _first_line(e: object) -> str:
    lines = [s for s in str(e).strip().splitlines() if s.strip()]
    return lines[0][:300] if lines else ""


# -- the table -------------------------------------------------------------------------------

def _fmt_s(r: dict, key: str) -> str:
    """CPU seconds (wall seconds when the CPU time was not recorded)."""
    cpu = key.replace("_s", "_cpu_s")
    return f"{r[cpu]:.1f}" if cpu in r else f"{r[key]:.1f}w" if key in r else "-"


def _fmt_ratio(r: dict) -> str:
    """The run's CPU time over onnxruntime's (its first run, same inputs, same process)."""
    if "run_cpu_s" not in r or not r.get("ort_run_cpu_s"):
        return "-"
    return f"{r['run_cpu_s'] / r['ort_run_cpu_s']:.1f}x"


def _fmt_err(r: dict) -> str:
    if "max_abs" in r:
        return f"{r['max_abs']:.1e}/{r['max_rel']:.1e}"
    return {"timeout": "TIMEOUT", "crash": "CRASH", "error": "FAIL", "wrong": "WRONG"}.get(
        r.get("status"), "-")


def print_table(rows: list[dict], backends: list[str], file=sys.stdout) -> None:
    head = ["model", "nodes", "ops", "import"]
    for b in backends:
        short = b[:6]
        head += [f"{short} compile s", f"{short} run s", f"{short} x ort",
                 f"{short} abs/rel err"]
    steady = [b for b in backends if any("steady_ratio" in row.get("checks", {}).get(b, {})
                                         for row in rows)]
    head += [f"{b[:6]} steady" for b in steady]
    head.append("error")
    lines = []
    for row in rows:
        checks = row.get("checks", {})
        imported = "export fail" if "export_error" in row else "-"
        for r in checks.values():
            if "import_s" in r:
                imported = f"ok {_fmt_s(r, 'import_s')}"
                break
            if r.get("status") in ("error", "crash", "timeout"):
                imported = "FAIL"
        cells = [row["name"], str(row.get("nodes", "-")), str(len(row.get("op_types", {})) or "-"),
                 imported]
        messages = []
        for b in backends:
            r = checks.get(b, {})
            cells += [_fmt_s(r, "compile_s"), _fmt_s(r, "run_s"), _fmt_ratio(r), _fmt_err(r)]
            if r.get("message"):
                messages.append(f"{b}: {r['message']}")
        cells += [f"{checks[b]['steady_ratio']:.2f}" if "steady_ratio" in checks.get(b, {})
                  else "-" for b in steady]
        if "export_error" in row:
            messages.append(row["export_error"])
        # one message when both backends fail the same way (e.g. in the importer)
        uniq = []
        for m in messages:
            body = m.split(": ", 1)[-1]
            if body not in [u.split(": ", 1)[-1] for u in uniq]:
                uniq.append(m)
        cells.append(" | ".join(uniq)[:240])
        lines.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h)
              for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    print(fmt(head), file=file)
    print(fmt(["-" * w for w in widths]), file=file)
    for cells in lines:
        print(fmt(cells), file=file)
    for b in steady:
        ratios = [row["checks"][b]["steady_ratio"] for row in rows
                  if row.get("checks", {}).get(b, {}).get("steady_ratio", 0) > 0]
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{b} steady state over onnxruntime (one thread each, CPU time): geometric mean "
              f"{mean:.2f} over {len(ratios)} models, {sum(r > 1.1 for r in ratios)} above 1.1",
              file=file)


def print_compile_table(rows: list[dict], file=sys.stdout) -> None:
    """The torch.compile checks: per model the glow backend's graphs, graph breaks,
    partitions, ops compiled / left to eager, the first call's CPU seconds (trace, compile,
    one run), a later call's CPU time over eager's, the errors against eager; the ops left
    to eager or why it failed."""
    head = ["model", "graphs", "breaks", "parts", "ops glow/eager", "compile s", "run/eager",
            "abs/rel err vs eager", "eager ops | failure"]
    lines = []
    for row in rows:
        r = row.get("checks", {}).get(TORCH_COMPILE)
        if r is None:
            continue
        counted = "graphs" in r
        counts = [str(r[k]) if counted else "-" for k in ("graphs", "graph_breaks", "partitions")]
        notes = [f"{op} x{n}" for op, n in sorted(r.get("eager_ops", {}).items())]
        notes += [f"failed: {m}" for m in r.get("compile_failures", [])]
        if r.get("message"):
            notes.insert(0, r["message"])
        ratio = r.get("run_ratio")
        lines.append([
            row["name"], *counts,
            f"{r['ops_glow']}/{r['ops_eager']}" if counted else "-",
            _fmt_s(r, "compile_s"), f"{ratio:.2f}" if ratio is not None else "-",
            _fmt_err(r), "; ".join(notes)[:200]])
    if not lines:
        return
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    print("\ntorch.compile(backend=\"glow\") against eager (glow cpu backend, one torch "
          "thread, CPU seconds):", file=file)
    print(fmt(head), file=file)
    print(fmt(["-" * w for w in widths]), file=file)
    for cells in lines:
        print(fmt(cells), file=file)
    checks = [row["checks"][TORCH_COMPILE] for row in rows
              if TORCH_COMPILE in row.get("checks", {})]
    ok = sum(r.get("status") == "ok" for r in checks)
    breaks = sum(r.get("graph_breaks", 0) for r in checks)
    print(f"{ok} of {len(lines)} equal eager (max rel error <= {TOLERANCE:g}); "
          f"{breaks} graph break(s) in all", file=file)


def report(rows: list[dict], backends: list[str], file=sys.stdout) -> None:
    """The table, then the failures grouped by cause."""
    onnx_backends = [b for b in backends if b != TORCH_COMPILE]
    if onnx_backends or TORCH_COMPILE not in backends:
        print_table(rows, onnx_backends, file)
    if TORCH_COMPILE in backends:
        print_compile_table(rows, file)
    failures: dict[str, list[str]] = {}
    for row in rows:
        if "export_error" in row:
            failures.setdefault("export", []).append(f"{row['name']}: {row['export_error']}")
        for b, r in row.get("checks", {}).items():
            c = r.get("cause") or cause(r)
            if c != "ok":
                failures.setdefault(c, []).append(
                    f"{row['name']} on {b}: {r.get('message', '')[:300]}")
    if failures:
        print("\nFailures by cause:", file=file)
        for c, items in sorted(failures.items()):
            print(f"  {c} ({len(items)}):", file=file)
            for item in items:
                print(f"    {item}", file=file)


# -- the command line ------------------------------------------------------------------------

def _whole_number(text: str) -> int:
    """An argparse type: 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number (0 or more), got '{text}'")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_child"]:
        _child(*argv[1:5])
        return 0
    if argv[:1] == ["--_compile_child"]:
        _compile_child(argv[1])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="print the corpus' model names")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="these models (default: all); NAME:small is a transformers model's "
                        "small configuration (SMALL, what the tests run)")
    p.add_argument("--check", nargs="+", metavar="BACKEND",
                   choices=[*BACKENDS, "accel", TORCH_COMPILE],
                   help="compile and run on these backends, compare with onnxruntime; "
                        f"{TORCH_COMPILE}: the torch module under torch.compile(backend="
                        "\"glow\"), compared with eager (no export)")
    p.add_argument("--time-limit", type=float, default=TIME_LIMIT,
                   help=f"CPU seconds per model and backend (default {TIME_LIMIT:.0f}; "
                        f"{WALL_FACTOR}x that of wall time)")
    p.add_argument("--steady", type=_whole_number, default=0, metavar="N",
                   help="after the first run, N more of ours and onnxruntime's alternating "
                        "(CPU time, fastest of each): the 'steady' column, their ratio, and "
                        "its geometric mean")
    p.add_argument("--exporter", choices=("auto", "legacy", "dynamo"), default="auto",
                   help="torch.onnx.export's exporter (auto: legacy, then dynamo)")
    p.add_argument("--cache-dir", help=f"where the exports live (default {DEFAULT_CACHE})")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON lines")
    p.add_argument("--ops", action="store_true", help="print each model's op types")
    p.add_argument("--report", nargs="+", metavar="JSON",
                   help="print the table of earlier --json results (the last row of a model wins)")
    args = p.parse_args(argv)
    if args.steady and not [b for b in args.check or () if b != TORCH_COMPILE]:
        print("error: --steady N times the runs of a --check BACKEND (e.g. --check cpu)",
              file=sys.stderr)
        return 1
    if args.report:
        by_name: dict[str, dict] = {}
        for path in args.report:
            for line in Path(path).read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    old = by_name.get(row["name"], {}).get("checks", {})
                    row["checks"] = {**old, **row.get("checks", {})}
                    by_name[row["name"]] = row
        seen = [b for row in by_name.values() for b in row["checks"]]
        report(list(by_name.values()),
               [b for b in (*BACKENDS, "accel", TORCH_COMPILE) if b in seen])
        return 0
    try:
        names = list_names()
    except MissingTorch as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.list:
        print("\n".join(names))
        return 0
    wanted = args.only or names
    unknown = [n for n in wanted if n.removesuffix(":small") not in names]
    if unknown:
        print(f"error: not in the corpus: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 1
    no_small = [n for n in wanted if n.endswith(":small") and n[:-6] not in SMALL]
    if no_small:
        print(f"error: no small configuration: {', '.join(no_small)} (those that have one: "
              f"{', '.join(SMALL)})", file=sys.stderr)
        return 1
    backends = args.check or []
    rows = []
    out = open(args.json, "a") if args.json else None  # noqa: SIM115
    try:
        for name in wanted:
            row: dict = {"name": name}
            onnx_backends = [b for b in backends if b != TORCH_COMPILE]
            entry = None
            if onnx_backends or not backends:  # torch.compile alone needs no export
                try:
                    base = name.removesuffix(":small")
                    entry = export(make_spec(base, small=base != name), args.cache_dir,
                                   args.exporter)
                    row.update(nodes=entry.meta["nodes"], op_types=entry.meta["op_types"],
                               exporter=entry.meta["exporter"])
                except MissingTorch as e:
                    print(f"error: {e}", file=sys.stderr)
                    return 1
                except Exception as e:  # noqa: BLE001 - counted in the table
                    row["export_error"] = f"export: {_first_line(e)}"
            row["checks"] = {}
            for b in backends:
                if b == TORCH_COMPILE:
                    row["checks"][b] = check_torch_compile(name, args.time_limit)
                elif entry is not None:
                    row["checks"][b] = check(entry, b, args.time_limit, args.steady)
            rows.append(row)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
            print(f"# {name}: " + (", ".join(f"{b} {r['status']}" for b, r in row["checks"].items())
                                   or row.get("export_error", "exported")),
                  file=sys.stderr, flush=True)
    finally:
        if out:
            out.close()
    report(rows, backends)
    if args.ops:
        for row in rows:
            ops = " ".join(f"{k}x{v}" for k, v in row.get("op_types", {}).items())
            print(f"{row['name']}: {ops}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
