"""PyTorch route: torch.export of the module in eval mode, decomposed with iree-turbine's AOT
table plus core-ATen's decompositions of scaled-dot-product attention (without them IREE keeps
attention as its own non-upstream op), imported with the FX importer's frozen-program path
(weights become dense_resource constants), then IREE's input lowering
(iree-compile --iree-input-type=torch --iree-torch-emit-async-entry-points=false
--compile-to=input) to upstream linalg inside util.func, which corpus_common unwraps.

Writes corpus/torch/<name>/ for every model below and the route's entries of corpus/manifest.json.
Run with the frontends virtual environment: .venv/bin/python export_torch.py
"""

import sys

import numpy as np
import torch
import torch.nn as nn
from iree.compiler.extras.fx_importer import FxImporter
from iree.compiler.ir import Context
from iree.turbine.aot.decompositions import current_aot_decompositions

import corpus_common as cc

ROUTE = "torch"
VERSIONS = cc.frameworks("torch", "iree-turbine", "iree-base-compiler", "transformers")

SEQ = 16
D_MLP, HIDDEN_MLP = 32, 128
D_ATT, HEADS_ATT = 64, 4
D_ENC, HEADS_ENC, HIDDEN_ENC = 32, 2, 128

torch.set_num_threads(1)


def decompositions():
    table = dict(current_aot_decompositions())
    core = torch._decomp.core_aten_decompositions()
    for key, fn in core.items():
        if "scaled_dot_product" in str(key):
            table[key] = fn
    return table


def set_weights(module, seed):
    """Every parameter and buffer of floating type gets a fixed-seed value: matrices scaled by
    1/sqrt(fan-in), norm scales near 1, biases and the rest small."""
    r = cc.rng(seed)
    with torch.no_grad():
        for name, p in list(module.named_parameters()):
            shape = tuple(p.shape)
            if len(shape) >= 2:
                value = cc.normal(r, shape, float(np.prod(shape[1:])) ** -0.5)
            elif "norm" in name.lower() and name.endswith("weight"):
                value = 1 + cc.normal(r, shape, 0.1)
            else:
                value = cc.normal(r, shape, 0.1)
            p.copy_(torch.from_numpy(value))


def to_linalg(module, args):
    program = torch.export.export(module, tuple(torch.from_numpy(a) for a in args))
    program = program.run_decompositions(decompositions())
    importer = FxImporter(context=Context())
    importer.import_frozen_program(program, func_name="main")
    text = str(importer.module_op)
    return cc.iree_input_lowering(text, "torch", ["--iree-torch-emit-async-entry-points=false"])


def export(name, description, build, arg_specs, seed):
    """build() returns the module; arg_specs is a list of (argument name, shape)."""
    try:
        torch.manual_seed(seed)
        module = build().eval()
        set_weights(module, seed + 1000)
        r = cc.rng(seed)
        args = [cc.normal(r, shape) for _, shape in arg_specs]
        with torch.no_grad():
            result = module(*(torch.from_numpy(a) for a in args))
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        expected = [t.detach().numpy() for t in results]
        text = to_linalg(module, args)
        return cc.write_model(ROUTE, name, text, [(n, a, False) for (n, _), a in zip(arg_specs, args)],
                              expected, description=description, versions=VERSIONS, input_type="auto")
    except Exception as e:  # recorded in the manifest; the other models go on
        return cc.record_failure(ROUTE, name, description, f"{type(e).__name__}: {e}")


class SelfAttention(nn.Module):
    """nn.MultiheadAttention used for self-attention, optionally with a causal mask."""

    def __init__(self, dim, heads, causal):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.causal = causal

    def forward(self, x):
        mask = None
        if self.causal:
            t = x.shape[1]
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]


class HFViT(nn.Module):
    """A Hugging Face transformers ViT from a tiny config (random weights, no download); returns
    the last hidden state."""

    def __init__(self):
        super().__init__()
        from transformers import ViTConfig, ViTModel
        config = ViTConfig(hidden_size=D_ENC, num_hidden_layers=2, num_attention_heads=HEADS_ENC,
                           intermediate_size=HIDDEN_ENC, image_size=16, patch_size=4, num_channels=3,
                           hidden_act="gelu", layer_norm_eps=1e-12, hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0)
        self.vit = ViTModel(config, add_pooling_layer=False)

    def forward(self, pixels):
        return self.vit(pixel_values=pixels).last_hidden_state


def main():
    entries = [
        export("mlp_gelu", f"nn.Linear {D_MLP}->{HIDDEN_MLP}, nn.GELU (exact), nn.Linear "
               f"{HIDDEN_MLP}->{D_MLP} on [1, {SEQ}, {D_MLP}]",
               lambda: nn.Sequential(nn.Linear(D_MLP, HIDDEN_MLP), nn.GELU(), nn.Linear(HIDDEN_MLP, D_MLP)),
               [("x", (1, SEQ, D_MLP))], 31),
        export("layer_norm", f"nn.LayerNorm({D_ENC}) on [1, {SEQ}, {D_ENC}]",
               lambda: nn.LayerNorm(D_ENC), [("x", (1, SEQ, D_ENC))], 32),
        export("mha_4head", f"nn.MultiheadAttention({D_ATT}, {HEADS_ATT}, batch_first=True) "
               f"self-attention on [1, {SEQ}, {D_ATT}], not causal",
               lambda: SelfAttention(D_ATT, HEADS_ATT, False), [("x", (1, SEQ, D_ATT))], 33),
        export("mha_4head_causal", f"nn.MultiheadAttention({D_ATT}, {HEADS_ATT}, batch_first=True) "
               f"self-attention on [1, {SEQ}, {D_ATT}] with a boolean causal attn_mask",
               lambda: SelfAttention(D_ATT, HEADS_ATT, True), [("x", (1, SEQ, D_ATT))], 34),
        export("encoder_preln", f"nn.TransformerEncoderLayer({D_ENC}, {HEADS_ENC}, {HIDDEN_ENC}, "
               f"dropout=0, activation='gelu', batch_first=True, norm_first=True) on [1, {SEQ}, {D_ENC}]",
               lambda: nn.TransformerEncoderLayer(D_ENC, HEADS_ENC, HIDDEN_ENC, dropout=0.0,
                                                  activation="gelu", batch_first=True, norm_first=True),
               [("x", (1, SEQ, D_ENC))], 35),
        export("hf_vit_tiny", f"transformers ViTModel from ViTConfig(hidden_size={D_ENC}, 2 layers, "
               f"{HEADS_ENC} heads, intermediate {HIDDEN_ENC}, 16x16x3 image, patch 4), random "
               f"weights; last_hidden_state [1, 17, {D_ENC}]",
               HFViT, [("pixel_values", (1, 3, 16, 16))], 36),
    ]
    cc.update_manifest(ROUTE, entries)
    sys.exit(cc.summary(ROUTE, entries))


if __name__ == "__main__":
    main()
