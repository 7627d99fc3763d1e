"""The built-in demo model of ``nnsim run``: a MobileNet v1 0.25 224 uint8 graph.

Same 31-op sequence, shapes and I/O as the hosted TOCO model ``mobilenet_v1_0.25_224_quant``
(CONV_2D 15, DEPTHWISE_CONV_2D 13, AVERAGE_POOL_2D, RESHAPE, SOFTMAX; input 1x224x224x3 uint8
with scale 1/128 and zero point 128, output 1x1001 uint8 with scale 1/256 and zero point 0),
but with generated weights: it is not trained, and its "classes" mean nothing.

How it is made (``build_demo_model``), deterministically from ``DEMO_SEED``:

1. Float weights from a seeded generator (He-normal), then a data-dependent rescaling: every
   layer's pre-activation standard deviation over a few seeded calibration images is brought
   to a fixed target, so that activations neither die nor saturate.
2. Calibration: the float model runs on the calibration images; each activation tensor gets
   a per-tensor uint8 range (ReLU6 layers: [0, max]; the logits: [min, max]).
3. Quantization as TOCO does it: per-tensor uint8 weights (asymmetric, min/max), int32 biases
   on ``in_scale * w_scale``, fused ReLU6, softmax output 1/256 and 0.

The float pass uses numpy elementwise products and ``einsum`` without BLAS, and the scale
factors and ranges it produces are rounded to 4 significant digits, so that the file does not
depend on the BLAS library or thread count. ``demo_model_bytes()`` builds it once and caches
it under the user cache directory (``$NNSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/nnsim``, else
``~/.cache/nnsim``); building takes about a second.
"""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from nnsim.kernels._common import same_padding
from nnsim.tflite.options import (Conv2DOptions, DepthwiseConv2DOptions, Pool2DOptions,
                                  ReshapeOptions, SoftmaxOptions)
from nnsim.tflite.reader import Quantization
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding, TensorType
from nnsim.tflite.writer import ModelWriter

__all__ = ["DEMO_MODEL_NAME", "DEMO_SEED", "build_demo_model", "demo_model_bytes",
           "demo_model_path", "demo_input", "DEMO_OP_SEQUENCE"]

DEMO_MODEL_NAME = "nnsim_demo_mobilenet_v1_0.25_224_quant.tflite"
DEMO_SEED = 20240611
_VERSION = 1                       # bump when the generator changes: renames the cache file
_WIDTH = 0.25
_CLASSES = 1001
_INPUT_SCALE, _INPUT_ZP = 1.0 / 128, 128
_CALIBRATION_IMAGES = 4
_TARGET_STD, _LOGIT_STD = 1.5, 2.5

# (kind, stride, output channels at width 1.0) for the 27 conv layers before the pooling.
_BODY = [("conv", 2, 32)] + [
    layer for stride, channels in [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
                                   (1, 512), (1, 512), (1, 512), (1, 512), (1, 512), (2, 1024),
                                   (1, 1024)]
    for layer in (("dw", stride, None), ("pw", 1, channels))]

DEMO_OP_SEQUENCE = (["CONV_2D"] + ["DEPTHWISE_CONV_2D", "CONV_2D"] * 13
                    + ["AVERAGE_POOL_2D", "CONV_2D", "RESHAPE", "SOFTMAX"])


def _sig(x: float, digits: int = 4) -> float:
    """Round to ``digits`` significant digits (keeps BLAS-level noise out of the file)."""
    return float(f"{float(x):.{digits - 1}e}")


# -- the float model --------------------------------------------------------------------------
def _same_pad(x, k, stride):
    out, before, after = same_padding(x.shape[0], k, stride)
    return np.pad(x, ((before, after), (before, after), (0, 0))), out


def _conv(x, w, b, stride):
    """SAME conv of one HWC image with ``w [Cout, k, k, Cin]`` (float64, no BLAS)."""
    k = w.shape[1]
    xp, out = _same_pad(x, k, stride)
    acc = np.zeros((out, out, w.shape[0]))
    for ky in range(k):
        for kx in range(k):
            tap = xp[ky:ky + (out - 1) * stride + 1:stride, kx:kx + (out - 1) * stride + 1:stride]
            acc += np.einsum("hwc,oc->hwo", tap, w[:, ky, kx, :], optimize=False)
    return acc + b


def _depthwise(x, w, b, stride):
    """SAME depthwise conv, ``w [1, k, k, C]``."""
    k = w.shape[1]
    xp, out = _same_pad(x, k, stride)
    acc = np.zeros((out, out, x.shape[2]))
    for ky in range(k):
        for kx in range(k):
            acc += xp[ky:ky + (out - 1) * stride + 1:stride,
                      kx:kx + (out - 1) * stride + 1:stride] * w[0, ky, kx]
    return acc + b


def _layer_forward(layer, x):
    if layer["kind"] == "dw":
        return _depthwise(x, layer["w"], layer["b"], layer["stride"])
    return _conv(x, layer["w"], layer["b"], layer["stride"])


def _make_float_layers(rng, images):
    """Seeded weights, rescaled layer by layer on the calibration images (float64)."""
    layers, cin = [], 3
    acts = [(img.astype(np.float64) - _INPUT_ZP) * _INPUT_SCALE for img in images]
    for kind, stride, channels in _BODY + [("logits", 1, None)]:
        if kind == "dw":
            w = rng.standard_normal((1, 3, 3, cin)) * np.sqrt(2.0 / 9)
            cout = cin
        else:
            cout = _CLASSES if kind == "logits" else max(8, int(channels * _WIDTH))
            k = 3 if kind == "conv" else 1
            w = rng.standard_normal((cout, k, k, cin)) * np.sqrt(2.0 / (k * k * cin))
        b = rng.standard_normal(cout) * 0.1
        layer = {"kind": "dw" if kind == "dw" else "conv", "stride": stride, "w": w, "b": b,
                 "logits": kind == "logits"}
        if kind == "logits":
            acts = [a.mean(axis=(0, 1), keepdims=True) for a in acts]  # the 7x7 average pool
            # Centre the logits on the calibration images' mean features: an untrained
            # network would otherwise answer the same class for every input.
            mean = np.mean(np.stack(acts), axis=0).reshape(-1)
            layer["b"] = b = b * 0.1 - np.einsum("oc,c->o", w[:, 0, 0, :], mean,
                                                 optimize=False)
        pre = [_layer_forward(layer, a) for a in acts]
        std = float(np.std(np.stack(pre)))
        factor = _sig((_LOGIT_STD if kind == "logits" else _TARGET_STD) / max(std, 1e-6))
        layer["w"], layer["b"] = w * factor, b * factor
        pre = [p * factor for p in pre]
        acts = pre if kind == "logits" else [np.clip(p, 0.0, 6.0) for p in pre]
        layers.append(layer)
        cin = cout
    return layers


def _calibrate(layers, images):
    """Per-layer output ranges ``(lo, hi)`` on the images (after ReLU6, logits raw)."""
    ranges = []
    acts = [(img.astype(np.float64) - _INPUT_ZP) * _INPUT_SCALE for img in images]
    for layer in layers:
        if layer["logits"]:
            pooled = [a.mean(axis=(0, 1), keepdims=True) for a in acts]
            acts = [_layer_forward(layer, a) for a in pooled]
            lo = min(float(a.min()) for a in acts)
            hi = max(float(a.max()) for a in acts)
            # Headroom: unseen inputs reach further than the few calibration images.
            ranges.append((_sig(1.5 * min(lo, 0.0)), _sig(1.5 * max(hi, 0.0))))
        else:
            acts = [np.clip(_layer_forward(layer, a), 0.0, 6.0) for a in acts]
            ranges.append((0.0, _sig(max(float(max(a.max() for a in acts)), 1e-3))))
    return ranges


# -- quantization -----------------------------------------------------------------------------
def _quant_params(lo, hi):
    """TOCO-style uint8 (scale, zero point) for a real range that contains 0."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(round(-lo / scale), 0, 255))
    return float(np.float32(scale)), zp


def _quantize_weights(w):
    scale, zp = _quant_params(float(w.min()), float(w.max()))
    q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def demo_input(seed: int = 0) -> np.ndarray:
    """A seeded 1x224x224x3 uint8 input (smooth random colour blobs, not noise)."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (1, 8, 8, 3)).astype(np.float64)
    up = np.repeat(np.repeat(coarse, 28, axis=1), 28, axis=2)
    noise = rng.integers(-20, 21, up.shape)
    return np.clip(up + noise, 0, 255).astype(np.uint8)


def build_demo_model(seed: int = DEMO_SEED) -> bytes:
    """Generate the demo model's .tflite bytes (deterministic for a given seed)."""
    rng = np.random.default_rng(seed)
    images = [demo_input(seed + 1 + k)[0] for k in range(_CALIBRATION_IMAGES)]
    layers = _make_float_layers(rng, images)
    ranges = _calibrate(layers, images)

    w = ModelWriter(description="nnsim demo: MobileNet v1 0.25 224 uint8 (generated weights)")
    x = w.add_tensor("input", (1, 224, 224, 3), TensorType.UINT8,
                     quantization=(_INPUT_SCALE, _INPUT_ZP))
    in_scale, in_zp = _INPUT_SCALE, _INPUT_ZP
    size, names = 224, _layer_names()
    for n, (layer, (lo, hi)) in enumerate(zip(layers, ranges)):
        if layer["logits"]:
            pool = w.add_tensor("MobilenetV1/Logits/AvgPool_1a/AvgPool",
                                (1, 1, 1, layer["w"].shape[3]), TensorType.UINT8,
                                quantization=(in_scale, in_zp))
            w.add_operator(B.AVERAGE_POOL_2D, [x], [pool], Pool2DOptions(
                padding=Padding.VALID, stride_w=2, stride_h=2, filter_width=size,
                filter_height=size, fused_activation_function=Act.NONE))
            x = pool
            size = 1
        qw, w_scale, w_zp = _quantize_weights(layer["w"])
        bias_scale = float(np.float32(np.float32(in_scale) * np.float32(w_scale)))
        qb = np.round(layer["b"] / bias_scale).astype(np.int32)
        out_scale, out_zp = _quant_params(lo, hi)
        stride = layer["stride"]
        size = -(-size // stride)
        prefix = names[n]
        wt = w.add_tensor(f"{prefix}/weights_quant/FakeQuantWithMinMaxVars", qw.shape,
                          TensorType.UINT8, data=qw, quantization=(w_scale, w_zp))
        bt = w.add_tensor(f"{prefix}/bias", qb.shape, TensorType.INT32, data=qb,
                          quantization=(bias_scale, 0))
        cout = qw.shape[3] if layer["kind"] == "dw" else qw.shape[0]
        out_name = (f"{prefix}/BiasAdd" if layer["logits"] else f"{prefix}/Relu6")
        y = w.add_tensor(out_name, (1, size, size, cout), TensorType.UINT8,
                         quantization=(out_scale, out_zp))
        act = Act.NONE if layer["logits"] else Act.RELU6
        if layer["kind"] == "dw":
            opts = DepthwiseConv2DOptions(padding=Padding.SAME, stride_w=stride,
                                          stride_h=stride, depth_multiplier=1,
                                          fused_activation_function=act)
            w.add_operator(B.DEPTHWISE_CONV_2D, [x, wt, bt], [y], opts)
        else:
            opts = Conv2DOptions(padding=Padding.SAME, stride_w=stride, stride_h=stride,
                                 fused_activation_function=act)
            w.add_operator(B.CONV_2D, [x, wt, bt], [y], opts)
        x, in_scale, in_zp = y, out_scale, out_zp
    shape = w.add_tensor("MobilenetV1/Logits/SpatialSqueeze_shape", (2,), TensorType.INT32,
                         data=np.array([1, _CLASSES], np.int32))
    squeezed = w.add_tensor("MobilenetV1/Logits/SpatialSqueeze", (1, _CLASSES),
                            TensorType.UINT8, quantization=(in_scale, in_zp))
    w.add_operator(B.RESHAPE, [x, shape], [squeezed], ReshapeOptions(new_shape=(1, _CLASSES)))
    probs = w.add_tensor("MobilenetV1/Predictions/Reshape_1", (1, _CLASSES), TensorType.UINT8,
                         quantization=Quantization([1.0 / 256], [0]))
    w.add_operator(B.SOFTMAX, [squeezed], [probs], SoftmaxOptions(beta=1.0))
    w.set_inputs([0])
    w.set_outputs([probs])
    return w.finish()


def _layer_names():
    names = ["MobilenetV1/MobilenetV1/Conv2d_0"]
    for k in range(1, 14):
        names += [f"MobilenetV1/MobilenetV1/Conv2d_{k}_depthwise",
                  f"MobilenetV1/MobilenetV1/Conv2d_{k}_pointwise"]
    return names + ["MobilenetV1/Logits/Conv2d_1c_1x1"]


# -- cache ------------------------------------------------------------------------------------
def cache_dir() -> Path:
    if os.environ.get("NNSIM_CACHE_DIR"):
        return Path(os.environ["NNSIM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nnsim"


def _cache_file() -> Path:
    stem = DEMO_MODEL_NAME[:-len(".tflite")]
    return cache_dir() / f"{stem}.v{_VERSION}.s{DEMO_SEED}.tflite"


def demo_model_path() -> Path:
    """The cached demo model file (generated on first use). Raises OSError when the cache
    directory cannot be written; ``demo_model_bytes()`` works without it."""
    path = _cache_file()
    if not _valid(path):
        _write_atomic(path, _generate())
    return path


@functools.lru_cache(maxsize=1)
def _generate() -> bytes:
    return build_demo_model(DEMO_SEED)


def _valid(path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    digest = path.with_suffix(".sha256")
    try:
        return digest.read_text().strip() == hashlib.sha256(data).hexdigest()
    except OSError:
        return False


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for target, payload in ((path, data),
                            (path.with_suffix(".sha256"),
                             (hashlib.sha256(data).hexdigest() + "\n").encode())):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".nnsim-demo-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def demo_model_bytes() -> bytes:
    """The demo model's .tflite bytes: from the user cache, else generated (and cached)."""
    path = _cache_file()
    if _valid(path):
        return path.read_bytes()
    data = _generate()
    try:
        _write_atomic(path, data)
    except OSError:
        pass  # a read-only home still gets the model, just not cached on disk
    return data
