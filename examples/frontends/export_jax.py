"""JAX / Flax route: jax.jit(f).lower(*args).as_text() gives StableHLO; IREE's input lowering
(iree-compile --iree-input-type=stablehlo --compile-to=input) turns it into upstream linalg on
tensors inside IREE's util.func wrapper, which corpus_common unwraps to func.func.

Writes corpus/jax/<name>/ for every model below and the route's entries of corpus/manifest.json.
Run with the frontends virtual environment: .venv/bin/python export_jax.py
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import flax.linen as nn  # noqa: E402

import corpus_common as cc  # noqa: E402

ROUTE = "jax"
VERSIONS = cc.frameworks("jax", "jaxlib", "flax", "iree-base-compiler")

# Small sizes so the corpus and the tests stay small and fast.
SEQ = 16
D_MLP, HIDDEN_MLP = 32, 128
D_ATT, HEADS_ATT = 64, 4
D_ENC, HEADS_ENC, HIDDEN_ENC = 32, 2, 128


# ---------------------------------------------------------------------------------------------
# Building blocks written with jax.numpy / jax.nn, as a user of plain JAX writes them.

def dense(x, w, b=None):
    y = x @ w
    return y if b is None else y + b


def mlp(x, w1, b1, w2, b2, approximate):
    return dense(jax.nn.gelu(dense(x, w1, b1), approximate=approximate), w2, b2)


def attention(x, wq, wk, wv, wo, heads, causal):
    """Multi-head self-attention on x [..., T, D]; heads == 1 keeps the plain 2-D form."""
    t, d = x.shape[-2], x.shape[-1]
    hd = d // heads
    q, k, v = x @ wq, x @ wk, x @ wv
    if heads > 1:
        def split(a):  # [..., T, D] -> [..., H, T, hd]
            a = a.reshape(*a.shape[:-1], heads, hd)
            return jnp.swapaxes(a, -2, -3)
        q, k, v = split(q), split(k), split(v)
    s = (q @ jnp.swapaxes(k, -1, -2)) / jnp.sqrt(jnp.float32(hd))
    if causal:
        mask = jnp.tril(jnp.ones((t, t), dtype=bool))
        s = jnp.where(mask, s, jnp.finfo(jnp.float32).min)
    p = jax.nn.softmax(s, axis=-1)
    o = p @ v
    if heads > 1:
        o = jnp.swapaxes(o, -2, -3).reshape(*x.shape[:-1], d)
    return o @ wo


def layer_norm(x, g, b, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * g + b


def encoder_preln(x, p, heads):
    """Pre-LN transformer encoder layer: x + MHA(LN(x)), then + MLP(LN(.)) with exact GeLU."""
    h = layer_norm(x, p["ln1_g"], p["ln1_b"])
    x = x + attention(h, p["wq"], p["wk"], p["wv"], p["wo"], heads, causal=False) + p["bo"]
    h = layer_norm(x, p["ln2_g"], p["ln2_b"])
    return x + mlp(h, p["w1"], p["b1"], p["w2"], p["b2"], approximate=False)


# ---------------------------------------------------------------------------------------------
# Weights (numpy, fixed seeds).

def mlp_weights(r, d, hidden):
    return {"w1": cc.normal(r, (d, hidden), d ** -0.5), "b1": cc.normal(r, (hidden,), 0.1),
            "w2": cc.normal(r, (hidden, d), hidden ** -0.5), "b2": cc.normal(r, (d,), 0.1)}


def attention_weights(r, d):
    return {k: cc.normal(r, (d, d), d ** -0.5) for k in ("wq", "wk", "wv", "wo")}


def encoder_weights(r, d, hidden):
    p = {"ln1_g": 1 + cc.normal(r, (d,), 0.1), "ln1_b": cc.normal(r, (d,), 0.1)}
    p.update(attention_weights(r, d))
    p["bo"] = cc.normal(r, (d,), 0.1)
    p.update({"ln2_g": 1 + cc.normal(r, (d,), 0.1), "ln2_b": cc.normal(r, (d,), 0.1)})
    p.update(mlp_weights(r, d, hidden))
    return p


# ---------------------------------------------------------------------------------------------
# Export.

def export(name, description, fn, args):
    """fn takes the arrays of args (list of (name, array, is_weight)) positionally and returns
    a tuple of results."""
    try:
        arrays = [jnp.asarray(a) for _, a, _ in args]
        jitted = jax.jit(fn)
        stablehlo = jitted.lower(*arrays).as_text()
        expected = [np.asarray(r) for r in jitted(*arrays)]
        text = cc.iree_input_lowering(stablehlo, "stablehlo")
        return cc.write_model(ROUTE, name, text, args, expected, description=description,
                              versions=VERSIONS, input_type="auto")
    except Exception as e:  # recorded in the manifest; the other models go on
        return cc.record_failure(ROUTE, name, description, e)


def models():
    out = []

    # MLPs, weights as inline constants (closed over) or as arguments.
    for name, approximate, seed in [("mlp_gelu_exact", False, 1), ("mlp_gelu_tanh", True, 2)]:
        r = cc.rng(seed)
        x = cc.normal(r, (SEQ, D_MLP))
        p = mlp_weights(r, D_MLP, HIDDEN_MLP)
        out.append(lambda name=name, approximate=approximate, x=x, p=p: export(
            name, f"dense {D_MLP}->{HIDDEN_MLP}, GeLU ({'tanh' if approximate else 'exact'}), "
                  f"dense {HIDDEN_MLP}->{D_MLP}; weights inline constants",
            lambda x: (mlp(x, p["w1"], p["b1"], p["w2"], p["b2"], approximate),),
            [("x", x, False)]))
    r = cc.rng(3)
    x = cc.normal(r, (SEQ, D_MLP))
    p = mlp_weights(r, D_MLP, HIDDEN_MLP)
    out.append(lambda x=x, p=p: export(
        "mlp_gelu_exact_args",
        f"dense {D_MLP}->{HIDDEN_MLP}, exact GeLU, dense {HIDDEN_MLP}->{D_MLP}; weights as arguments",
        lambda x, w1, b1, w2, b2: (mlp(x, w1, b1, w2, b2, False),),
        [("x", x, False)] + [(k, p[k], True) for k in ("w1", "b1", "w2", "b2")]))

    # Attention: single head on [T, D], multi-head on [1, T, D]; causal and not.
    for name, heads, causal, seed in [("attention_1head", 1, False, 4),
                                      ("attention_1head_causal", 1, True, 5),
                                      ("mha_4head", HEADS_ATT, False, 6),
                                      ("mha_4head_causal", HEADS_ATT, True, 7)]:
        r = cc.rng(seed)
        d = D_MLP if heads == 1 else D_ATT
        x = cc.normal(r, (SEQ, d) if heads == 1 else (1, SEQ, d))
        p = attention_weights(r, d)
        out.append(lambda name=name, heads=heads, causal=causal, x=x, p=p, d=d: export(
            name, f"self-attention, {heads} head(s), d={d}, {'causal' if causal else 'not causal'}, "
                  f"q/k/v/out projections; weights inline constants",
            lambda x: (attention(x, p["wq"], p["wk"], p["wv"], p["wo"], heads, causal),),
            [("x", x, False)]))
    r = cc.rng(8)
    x = cc.normal(r, (1, SEQ, D_ATT))
    p = attention_weights(r, D_ATT)
    out.append(lambda x=x, p=p: export(
        "mha_4head_args",
        f"self-attention, {HEADS_ATT} heads, d={D_ATT}, not causal; projection weights as arguments",
        lambda x, wq, wk, wv, wo: (attention(x, wq, wk, wv, wo, HEADS_ATT, False),),
        [("x", x, False)] + [(k, p[k], True) for k in ("wq", "wk", "wv", "wo")]))

    # jax.nn.dot_product_attention on q, k, v [B, T, N, H].
    for name, causal, seed in [("dot_product_attention", False, 9),
                               ("dot_product_attention_causal", True, 10)]:
        r = cc.rng(seed)
        q, k, v = (cc.normal(r, (1, SEQ, HEADS_ATT, D_ATT // HEADS_ATT)) for _ in range(3))
        out.append(lambda name=name, causal=causal, q=q, k=k, v=v: export(
            name, f"jax.nn.dot_product_attention(q, k, v, is_causal={causal}), "
                  f"[B, T, N, H] = [1, {SEQ}, {HEADS_ATT}, {D_ATT // HEADS_ATT}]",
            lambda q, k, v: (jax.nn.dot_product_attention(q, k, v, is_causal=causal),),
            [("q", q, False), ("k", k, False), ("v", v, False)]))

    # Pre-LN encoder layers.
    for name, batch, seed in [("encoder_preln_b1", 1, 11), ("encoder_preln_b2", 2, 12)]:
        r = cc.rng(seed)
        x = cc.normal(r, (batch, SEQ, D_ENC))
        p = encoder_weights(r, D_ENC, HIDDEN_ENC)
        out.append(lambda name=name, x=x, p=p, batch=batch: export(
            name, f"pre-LN encoder layer, batch {batch}, T={SEQ}, d={D_ENC}, {HEADS_ENC} heads, "
                  f"MLP {HIDDEN_ENC} exact GeLU; weights inline constants",
            lambda x: (encoder_preln(x, p, HEADS_ENC),),
            [("x", x, False)]))
    r = cc.rng(13)
    x = cc.normal(r, (1, SEQ, D_ENC))
    p = encoder_weights(r, D_ENC, HIDDEN_ENC)
    keys = list(p)
    out.append(lambda x=x, p=p, keys=keys: export(
        "encoder_preln_b1_args",
        f"pre-LN encoder layer, batch 1, T={SEQ}, d={D_ENC}, {HEADS_ENC} heads, MLP {HIDDEN_ENC} "
        f"exact GeLU; weights as arguments",
        lambda x, *ws: (encoder_preln(x, dict(zip(keys, ws)), HEADS_ENC),),
        [("x", x, False)] + [(k, p[k], True) for k in keys]))

    # Flax linen ViT block and a tiny ViT with patch embedding (parameters inline constants).
    r = cc.rng(14)
    x = cc.normal(r, (1, SEQ + 1, D_ENC))
    block = ViTBlock(dim=D_ENC, heads=HEADS_ENC, hidden=HIDDEN_ENC)
    params = block.init(jax.random.PRNGKey(14), jnp.asarray(x))
    out.append(lambda x=x, params=params, block=block: export(
        "flax_vit_block",
        f"flax.linen ViT block: LayerNorm, MultiHeadDotProductAttention ({HEADS_ENC} heads), "
        f"residual, LayerNorm, Dense {HIDDEN_ENC} + gelu + Dense {D_ENC}, residual; "
        f"[1, {SEQ + 1}, {D_ENC}]; parameters inline constants",
        lambda x: (block.apply(params, x),),
        [("x", x, False)]))
    r = cc.rng(15)
    image = cc.normal(r, (1, 16, 16, 3))
    vit = TinyViT(patch=4, dim=D_ENC, heads=HEADS_ENC, hidden=HIDDEN_ENC, depth=1, classes=10)
    vparams = vit.init(jax.random.PRNGKey(15), jnp.asarray(image))
    out.append(lambda image=image, vparams=vparams, vit=vit: export(
        "flax_vit_tiny",
        f"flax.linen tiny ViT: 16x16x3 image, 4x4 patch Conv embedding to {D_ENC}, class token, "
        f"position embedding, 1 ViT block, LayerNorm, Dense 10 head on the class token; "
        f"parameters inline constants",
        lambda image: (vit.apply(vparams, image),),
        [("image", image, False)]))
    return out


class ViTBlock(nn.Module):
    dim: int
    heads: int
    hidden: int

    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, qkv_features=self.dim)(h, h)
        h = nn.LayerNorm()(x)
        h = nn.Dense(self.dim)(nn.gelu(nn.Dense(self.hidden)(h)))
        return x + h


class TinyViT(nn.Module):
    patch: int
    dim: int
    heads: int
    hidden: int
    depth: int
    classes: int

    @nn.compact
    def __call__(self, image):
        b = image.shape[0]
        x = nn.Conv(self.dim, (self.patch, self.patch), strides=(self.patch, self.patch),
                    padding="VALID")(image)
        x = x.reshape(b, -1, self.dim)
        cls = self.param("cls", nn.initializers.normal(0.02), (1, 1, self.dim))
        x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, self.dim)), x], axis=1)
        pos = self.param("pos", nn.initializers.normal(0.02), (1, x.shape[1], self.dim))
        x = x + pos
        for _ in range(self.depth):
            x = ViTBlock(self.dim, self.heads, self.hidden)(x)
        x = nn.LayerNorm()(x)
        return nn.Dense(self.classes)(x[:, 0])


def main():
    entries = [make() for make in models()]
    cc.update_manifest(ROUTE, entries)
    sys.exit(cc.summary(ROUTE, entries))


if __name__ == "__main__":
    main()
