"""TensorFlow / Keras route: a Keras model's concrete function, its variables frozen to constants,
goes through tf.lite.TFLiteConverter to a TFLite flatbuffer, and Arm's tosa-converter-for-tflite
turns that into TOSA MLIR text (func.func @main with tosa ops and tfl.* module attributes).

The converter replaces exact GeLU by the tanh formula, so the models here use Keras' tanh GeLU
(approximate=True) and the module computes what Keras computes.

Writes corpus/tf/<name>/ for every model below and the route's entries of corpus/manifest.json.
Run with the frontends virtual environment: .venv/bin/python export_tf.py
"""

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2)
import tosa_converter_for_tflite as tosa_tflite  # noqa: E402

import corpus_common as cc  # noqa: E402

ROUTE = "tf"
VERSIONS = cc.frameworks("tensorflow-cpu", "keras", "tosa-converter-for-tflite", "iree-base-compiler")

SEQ = 16
D_MLP, HIDDEN_MLP = 32, 128
D_ATT, HEADS_ATT = 64, 4
D_ENC, HEADS_ENC, HIDDEN_ENC = 32, 2, 128


def gelu_tanh(x):
    return keras.activations.gelu(x, approximate=True)


def set_weights(model, seed):
    """Replaces every weight by a fixed-seed value (non-zero biases, layer-norm scales near 1),
    so the export does not depend on Keras' initializers."""
    r = cc.rng(seed)
    for w in model.weights:
        shape = tuple(w.shape)
        if w.path.endswith("gamma"):
            value = 1 + cc.normal(r, shape, 0.1)
        elif len(shape) <= 1:
            value = cc.normal(r, shape, 0.1)
        else:
            fan_in = int(np.prod(shape[:-1]))
            value = cc.normal(r, shape, fan_in ** -0.5)
        w.assign(value)


def to_tosa(model, x):
    """Keras model -> frozen concrete function -> TFLite -> TOSA MLIR text."""
    fn = tf.function(lambda x: model(x, training=False))
    concrete = fn.get_concrete_function(tf.TensorSpec(x.shape, tf.float32, name="x"))
    frozen = convert_variables_to_constants_v2(concrete)
    flatbuffer = tf.lite.TFLiteConverter.from_concrete_functions([frozen]).convert()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "model.tflite"
        out = Path(tmp) / "model.mlir"
        src.write_bytes(flatbuffer)
        tosa_tflite.tflite_flatbuffer_to_tosa_mlir(str(src), str(out),
                                                    tosa_tflite.TosaConverterOutputFormat.Text)
        return out.read_text()


def export(name, description, build, seed):
    try:
        keras.utils.set_random_seed(seed)
        r = cc.rng(seed)
        model, x_shape = build()
        set_weights(model, seed + 1000)
        x = cc.normal(r, x_shape)
        expected = [np.asarray(model(x, training=False))]
        text = to_tosa(model, x)
        return cc.write_model(ROUTE, name, text, [("x", x, False)], expected,
                              description=description, versions=VERSIONS, input_type="tosa",
                              iree_via_generic=True)
    except Exception as e:  # recorded in the manifest; the other models go on
        return cc.record_failure(ROUTE, name, description, e)


def mlp():
    x = keras.Input((SEQ, D_MLP), batch_size=1)
    h = keras.layers.Dense(HIDDEN_MLP, activation=gelu_tanh)(x)
    return keras.Model(x, keras.layers.Dense(D_MLP)(h)), (1, SEQ, D_MLP)


def layer_norm():
    x = keras.Input((SEQ, D_ENC), batch_size=1)
    return keras.Model(x, keras.layers.LayerNormalization(epsilon=1e-5)(x)), (1, SEQ, D_ENC)


def mha(causal):
    def build():
        x = keras.Input((SEQ, D_ATT), batch_size=1)
        y = keras.layers.MultiHeadAttention(num_heads=HEADS_ATT, key_dim=D_ATT // HEADS_ATT)(
            x, x, use_causal_mask=causal)
        return keras.Model(x, y), (1, SEQ, D_ATT)
    return build


def encoder():
    x = keras.Input((SEQ, D_ENC), batch_size=1)
    h = keras.layers.LayerNormalization(epsilon=1e-5)(x)
    h = keras.layers.MultiHeadAttention(num_heads=HEADS_ENC, key_dim=D_ENC // HEADS_ENC)(h, h)
    x1 = keras.layers.Add()([x, h])
    h = keras.layers.LayerNormalization(epsilon=1e-5)(x1)
    h = keras.layers.Dense(HIDDEN_ENC, activation=gelu_tanh)(h)
    h = keras.layers.Dense(D_ENC)(h)
    return keras.Model(x, keras.layers.Add()([x1, h])), (1, SEQ, D_ENC)


def main():
    entries = [
        export("mlp_gelu_tanh", f"Keras Dense {D_MLP}->{HIDDEN_MLP} with tanh GeLU, Dense "
               f"{HIDDEN_MLP}->{D_MLP}, on [1, {SEQ}, {D_MLP}]", mlp, 21),
        export("layer_norm", f"Keras LayerNormalization on [1, {SEQ}, {D_ENC}]", layer_norm, 22),
        export("mha_4head", f"Keras MultiHeadAttention self-attention, {HEADS_ATT} heads, "
               f"key_dim {D_ATT // HEADS_ATT}, on [1, {SEQ}, {D_ATT}], not causal", mha(False), 23),
        export("mha_4head_causal", f"Keras MultiHeadAttention self-attention, {HEADS_ATT} heads, "
               f"key_dim {D_ATT // HEADS_ATT}, on [1, {SEQ}, {D_ATT}], use_causal_mask=True",
               mha(True), 24),
        export("encoder_preln", f"Keras pre-LN encoder block on [1, {SEQ}, {D_ENC}]: "
               f"LayerNormalization, MultiHeadAttention ({HEADS_ENC} heads), residual, "
               f"LayerNormalization, Dense {HIDDEN_ENC} tanh GeLU, Dense {D_ENC}, residual",
               encoder, 25),
    ]
    cc.update_manifest(ROUTE, entries)
    sys.exit(cc.summary(ROUTE, entries))


if __name__ == "__main__":
    main()
