"""The corpus' segmentation and detection models and its transformers models built from
their configs (benchmarks/real_models.py), in their small configurations: each exported by
one exporter (the benchmark runs both), compiled for the interpreter and cpu, and compared
with onnxruntime's and PyTorch eager's outputs for the same inputs. The transformers models need
no torchvision (the CI machine has none); the segmentation ones skip without it."""

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

import glow_mlir  # noqa: E402

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "real_models.py"

CASES = [
    # (model, exporter): one exporter per model, the two alternating
    ("lraspp_mobilenet_v3_large", "legacy"),
    # with its post-processing: per-class TopK of run-time length, NMS, an If on "no boxes"
    ("ssdlite320_mobilenet_v3_large", "legacy"),
    ("deeplabv3_mobilenet_v3_large", "dynamo"),
    ("t5_encoder", "dynamo"),
    ("t5_decoder_step", "legacy"),
    ("t5_decoder_cached_step", "dynamo"),
    ("clip", "legacy"),
    ("whisper_encoder", "dynamo"),
    ("wav2vec2", "legacy"),
]


@pytest.fixture(scope="module")
def exported(real_models, tmp_path_factory):
    """The export of a case, made once for both backends."""
    cache = tmp_path_factory.mktemp("real_model_tasks")
    done = {}

    def get(name, exporter):
        if name in real_models.SEGMENTATION or name in real_models.DETECTION:
            pytest.importorskip("torchvision")
        else:
            pytest.importorskip("transformers")
        if exporter == "dynamo":
            pytest.importorskip("onnxscript", reason="the dynamo exporter needs onnxscript")
        if (name, exporter) not in done:
            spec = real_models.make_spec(name, small=name in real_models.SMALL)
            done[name, exporter] = real_models.export(spec, cache, exporter)
        return done[name, exporter]

    return get


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize(("name", "exporter"), CASES, ids=[c[0] for c in CASES])
def test_matches_onnxruntime_and_eager(real_models, exported, name, exporter, backend):
    import onnx

    entry = exported(name, exporter)
    assert entry.meta["exporter"] == exporter
    inputs, expected = real_models.load_data(entry)
    eager = real_models.load_torch_outputs(entry)
    # outputs a wrong compile could not match by chance
    assert max(float(np.abs(e).max()) for e in expected) > 1e-2
    compiled = glow_mlir.compile(onnx.load(str(entry.onnx_path)), backend=backend)
    assert set(compiled.input_names) == set(inputs)
    got = compiled.run(inputs)
    detections = name in real_models.DETECTION
    if detections:  # detections a wrong compile could not match by chance: several
        assert len(expected[0]) >= 10
    for reference in (expected, eager):
        errors = real_models.compare(got, reference, detections)
        assert "mismatch" not in errors, errors
        assert errors["max_rel"] <= real_models.TOLERANCE, errors
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype


def test_small_configurations_are_small(real_models):
    """The tier's configurations stay small whatever transformers' defaults become."""
    for name, config in real_models.SMALL.items():
        sizes = {k: v for k, v in config.items()
                 if k.endswith(("hidden_size", "d_model")) and isinstance(v, int)}
        assert all(v <= 64 for v in sizes.values()), (name, sizes)


def test_clip_overrides_go_into_its_towers(real_models):
    config = {"text_num_hidden_layers": 2, "vision_config": {"patch_size": 16},
              "vision_image_size": 64, "projection_dim": 32}
    assert real_models._nest(config) == {
        "text_config": {"num_hidden_layers": 2},
        "vision_config": {"patch_size": 16, "image_size": 64}, "projection_dim": 32}
    assert config["vision_config"] == {"patch_size": 16}  # the caller's dict untouched


def test_a_variant_with_many_overrides_has_a_short_distinct_key(real_models):
    """The small CLIP's name is over 300 characters: as a file name it failed to export
    ("File name too long"); its key is its digest, one per variant."""
    pytest.importorskip("transformers")
    small = real_models.make_spec("clip", small=True)
    other = real_models.make_spec("clip", small=True, projection_dim=16)
    assert len(small.name) > 255
    assert len(small.key()) <= real_models.KEY_LENGTH and small.key().startswith("clip_")
    assert small.key() != other.key()
    short = real_models.make_spec("bert", num_hidden_layers=2)
    assert short.key().startswith("bert_num_hidden_layers=2-")  # short names stay readable


def test_only_the_transformers_models_have_small_configurations(real_models):
    with pytest.raises(ValueError, match="'resnet18' has no small configuration"):
        real_models.make_spec("resnet18", small=True)


def test_the_command_refuses_a_small_configuration_a_model_lacks():
    import subprocess

    pytest.importorskip("torchvision")
    proc = subprocess.run([sys.executable, str(PATH), "--only", "resnet18:small", "clip:small"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: no small configuration: resnet18:small (those that "
                                  "have one: bert, t5_encoder")


def test_the_corpus_lists_the_new_families(real_models):
    pytest.importorskip("torchvision")
    names = real_models.list_names()
    wanted = {*real_models.SEGMENTATION, *real_models.DETECTION, "t5_encoder",
              "t5_decoder_step", "t5_decoder_cached_step", "clip", "whisper_encoder", "wav2vec2"}
    assert wanted <= set(names)
    assert len(names) == len(set(names))
    assert real_models.make_spec("retinanet_resnet50_fpn").family == "detection"
    assert real_models.make_spec("fcn_resnet50").output_names == ("out",)
