#!/usr/bin/env python3
"""Exports the models the assigner's tests read, as a user would: PyTorch's own exporter
(torch.onnx.export), random weights, shrunk widths so that each file stays small.

    /usr/bin/python3 tools/export_onnx_models.py tests/assigner/data        # the test data
    /usr/bin/python3 tools/export_onnx_models.py DIR --full-encoder          # bench/assigner's
    /usr/bin/python3 tools/export_onnx_models.py DIR --gpt2-small            # GPT-2 small's size

Needs Debian's python3-torch, python3-torchvision and python3-onnx; the suite itself reads the
committed files and needs none of them. Writes DIR/NAME.onnx and DIR/manifest.json, which
records each model's parameters as PyTorch counts them (the tests hold these numbers).
"""
import argparse
import json
import math
import os

import onnx
import torch
import torch.nn as nn

torch.manual_seed(0)


class encoder(nn.Module):
    """nn.TransformerEncoder with batch-first inputs of features."""

    def __init__(self, layers, width, heads, ff):
        super().__init__()
        layer = nn.TransformerEncoderLayer(width, heads, ff, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)

    def forward(self, x):
        return self.enc(x)


class lstm_lm(nn.Module):
    """An LSTM language model: embedding, stacked LSTM, projection to the vocabulary."""

    def __init__(self, vocab, width, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, layers, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out)


class block(nn.Module):
    """A GPT-2 block: causal self-attention and an MLP, each after a LayerNorm."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.attn(self.ln_1(x)).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (y.view(shape).transpose(1, 2) for y in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
        scores = scores.masked_fill(~mask, float("-inf"))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(nn.functional.gelu(self.fc(self.ln_2(x))))


class decoder(nn.Module):
    """A GPT-2-style causal decoder: token and position embeddings, blocks, a final LayerNorm and
    a head tied to nothing (as the exporter sees a separate weight)."""

    def __init__(self, vocab, width, heads, blocks, context):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(block(width, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


class cnn(nn.Module):
    """A small CNN: a strided conv, a grouped and dilated conv, batch norms, pooling, a head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16),
                                  nn.ReLU())
        self.body = nn.Sequential(nn.Conv2d(16, 32, 3, padding=2, dilation=2, groups=4),
                                  nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.body(self.stem(x)))


def export(model, example, path, names, dynamic=None, opset=13, external=False):
    # Weights of their own for every parameter: nn.TransformerEncoder's layers start as copies
    # of one, and the exporter would keep a single copy of equal weights.
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    model.eval()
    torch.onnx.export(model, example, path, input_names=names[0], output_names=names[1],
                      dynamic_axes=dynamic, opset_version=opset, do_constant_folding=True)
    if external:  # the weights in a file of their own, as every model over 2 GB has them
        m = onnx.load(path)
        data = os.path.basename(path) + ".data"
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data, size_threshold=0)
    return {"parameters": sum(p.numel() for p in model.parameters()),
            "parameter_bytes": sum(p.numel() * p.element_size() for p in model.parameters())}


def test_models(folder):
    manifest = {}
    seq_axes = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    token_axes = {"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    manifest["encoder_static"] = export(encoder(2, 64, 4, 128), torch.randn(2, 16, 64),
                                        f"{folder}/encoder_static.onnx", (["x"], ["y"]))
    manifest["encoder_dynamic"] = export(encoder(2, 64, 4, 128), torch.randn(2, 16, 64),
                                         f"{folder}/encoder_dynamic.onnx", (["x"], ["y"]),
                                         dynamic=seq_axes)
    manifest["lstm_lm"] = export(lstm_lm(500, 64, 2), torch.randint(0, 500, (2, 16)),
                                 f"{folder}/lstm_lm.onnx", (["tokens"], ["logits"]),
                                 dynamic=token_axes)
    manifest["gpt_decoder"] = export(decoder(500, 64, 4, 2, 64), torch.randint(0, 500, (2, 16)),
                                     f"{folder}/gpt_decoder.onnx", (["tokens"], ["logits"]),
                                     dynamic=token_axes, opset=14)
    manifest["cnn"] = export(cnn(), torch.randn(1, 3, 32, 32), f"{folder}/cnn.onnx",
                             (["image"], ["scores"]))
    manifest["cnn_external"] = export(cnn(), torch.randn(1, 3, 32, 32),
                                      f"{folder}/cnn_external.onnx", (["image"], ["scores"]),
                                      external=True)
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--full-encoder", action="store_true",
                        help="only a 24-layer encoder of width 768 (bench/assigner)")
    parser.add_argument("--gpt2-small", action="store_true",
                        help="only a decoder of GPT-2 small's size: 12 blocks of width 768")
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    if args.gpt2_small:
        manifest = {"gpt2_small": export(decoder(50257, 768, 12, 12, 1024),
                                         torch.randint(0, 50257, (1, 64)),
                                         f"{args.folder}/gpt2_small.onnx", (["tokens"], ["logits"]),
                                         dynamic={"tokens": {0: "batch", 1: "seq"},
                                                  "logits": {0: "batch", 1: "seq"}}, opset=14)}
    elif args.full_encoder:
        manifest = {"encoder_24": export(encoder(24, 768, 12, 3072), torch.randn(1, 128, 768),
                                         f"{args.folder}/encoder_24.onnx", (["x"], ["y"]),
                                         dynamic={"x": {0: "batch", 1: "seq"}})}
    else:
        manifest = test_models(args.folder)
    with open(f"{args.folder}/manifest.json", "w") as out:
        json.dump(manifest, out, indent=2, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main()
