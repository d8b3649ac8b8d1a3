"""Small real architectures built with torch, nothing downloaded: torchvision's ResNet-18
and MobileNetV3-small (`weights=None`), transformers' BERT and GPT-2 from tiny configs
(2 layers, hidden 64). Each builder gives an eval-mode module and its example inputs.
Import after `pytest.importorskip("torch")`."""

from __future__ import annotations

import torch

IMAGE = (1, 3, 64, 64)
TOKENS = (2, 16)
VOCAB = 100


def _calibrate_batch_norm(model, image=IMAGE) -> None:
    """Running statistics from two random batches: a random network's initial mean 0,
    variance 1 normalise nothing, and MobileNet's logits come out near 1e-9, too small to
    tell a right answer from a wrong one."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    g = torch.Generator().manual_seed(2)
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(4, *image[1:], generator=g))
    model.eval()


def torchvision_model(name: str, image=IMAGE):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None)
    _calibrate_batch_norm(model, image)
    return model.eval(), (torch.randn(*image, generator=torch.Generator().manual_seed(1)),)


class LastHiddenState(torch.nn.Module):
    """A transformers model with one plain tensor output (its last hidden state)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask=None):
        return self.model(input_ids, attention_mask=attention_mask,
                          return_dict=True).last_hidden_state


def transformers_model(name: str):
    import transformers

    torch.manual_seed(0)
    if name == "bert":
        config = transformers.BertConfig(num_hidden_layers=2, hidden_size=64,
                                         num_attention_heads=2, intermediate_size=128,
                                         vocab_size=VOCAB, max_position_embeddings=64)
        model = transformers.BertModel(config)
    else:
        config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=VOCAB,
                                         n_positions=64)
        model = transformers.GPT2Model(config)
    config._attn_implementation = "eager"  # plain matmul and softmax for either exporter
    config.use_cache = False
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, TOKENS, generator=g)
    if name == "gpt2":
        return LastHiddenState(model).eval(), (ids,)
    mask = torch.ones(TOKENS, dtype=torch.int64)
    mask[1, TOKENS[1] - 4:] = 0  # padding in the second sequence, so the mask matters
    return LastHiddenState(model).eval(), (ids, mask)


class ConvNet(torch.nn.Module):
    """conv 3->8, batch norm, relu, `reduce` to 8 features per image, linear 8->5 times
    `scale`, softmax: the small network the tests export, compile and split (the
    torch.compile tests put an op no exporter knows in `reduce`)."""

    def __init__(self, reduce, scale: float = 1.0):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)
        self.reduce, self.scale = reduce, scale

    def forward(self, x):
        y = self.reduce(torch.relu(self.bn(self.conv(x))))
        return torch.softmax(self.fc(y) * self.scale, dim=-1)


def conv_net(reduce=lambda y: y.mean((2, 3)), scale: float = 1.0) -> ConvNet:
    """A `ConvNet` with seeded weights and batch norm statistics that normalize something,
    in eval mode."""
    torch.manual_seed(0)
    model = ConvNet(reduce, scale).eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    return model


def build(name: str, image=IMAGE):
    if name in ("bert", "gpt2"):
        return transformers_model(name)
    return torchvision_model(name, image)


def eager(model, inputs):
    with torch.no_grad():
        return model(*inputs).numpy()
