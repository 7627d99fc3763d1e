"""Input loading for the CLI: .npy arrays and images (BMP and PPM built in, JPEG/PNG and the
rest through Pillow, the optional extra ``pip install nnsim[images]``), resized to a model input
([1,H,W,3] or NCHW [1,3,H,W]) with bilinear sampling, and PNG class masks for segmentation.

A .npy array must have the input's exact dtype, as LiteRT's ``set_tensor`` demands; with
``quantize`` a float array is quantized with the input's scale and zero point instead.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np


class InputError(Exception):
    """An input file cannot be used for the model's input."""


def _read_bmp(data: bytes) -> np.ndarray:
    if data[:2] != b"BM" or len(data) < 54:
        raise InputError("not a BMP file")
    offset, = struct.unpack_from("<I", data, 10)
    width, height, planes, bpp, compression = struct.unpack_from("<iiHHI", data, 18)
    if bpp not in (24, 32) or compression not in (0, 3):
        raise InputError(f"unsupported BMP format ({bpp} bits, compression {compression})")
    channels = bpp // 8
    row = (width * channels + 3) & ~3
    h = abs(height)
    need = offset + row * h
    if len(data) < need:
        raise InputError("truncated BMP file")
    pixels = np.frombuffer(data, np.uint8, row * h, offset).reshape(h, row)
    img = pixels[:, :width * channels].reshape(h, width, channels)[:, :, 2::-1]  # BGR -> RGB
    return img[::-1] if height > 0 else img  # bottom-up rows


def _ppm_header(data: bytes):
    """(width, height, maxval, offset of the pixels) of a P6 header: four whitespace-separated
    tokens, '#' comments to the end of a line, and exactly one whitespace byte before the
    pixels (so a first pixel byte of 9-13 or 32 is data, not whitespace)."""
    tokens, k = [], 2
    while len(tokens) < 3:
        while k < len(data) and (data[k:k + 1].isspace() or data[k:k + 1] == b"#"):
            if data[k:k + 1] == b"#":
                end = data.find(b"\n", k)
                k = len(data) if end < 0 else end
            k += 1
        start = k
        while k < len(data) and data[k:k + 1].isdigit():
            k += 1
        if start == k:
            raise InputError("malformed PPM header")
        tokens.append(int(data[start:k]))
    if k >= len(data) or not data[k:k + 1].isspace():
        raise InputError("malformed PPM header")
    return tokens[0], tokens[1], tokens[2], k + 1


def _read_ppm(data: bytes) -> np.ndarray:
    if data[:2] != b"P6":
        raise InputError("only binary PPM (P6) is supported")
    w, h, maxval, offset = _ppm_header(data)
    if maxval != 255:
        raise InputError("only 8-bit PPM is supported")
    if len(data) < offset + w * h * 3:
        raise InputError(f"truncated PPM file ({len(data) - offset} pixel bytes for {w}x{h})")
    return np.frombuffer(data, np.uint8, w * h * 3, offset).reshape(h, w, 3)


PILLOW_HINT = "pip install 'nnsim[images]' (Pillow)"


def read_image(path: str | Path) -> np.ndarray:
    """HxWx3 uint8 RGB."""
    data = Path(path).read_bytes()
    if data[:2] == b"BM":
        return _read_bmp(data)
    if data[:2] == b"P6":
        return _read_ppm(data)
    try:
        from PIL import Image, UnidentifiedImageError   # optional: the images extra
    except ImportError:
        raise InputError(f"{path}: only .npy, BMP and PPM inputs are built in; JPEG, PNG and "
                         f"other images need {PILLOW_HINT}") from None
    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except UnidentifiedImageError:
        raise InputError(f"{path}: not an image Pillow can read, nor a .npy file") from None
    except (ValueError, SyntaxError) as e:   # Pillow's errors for corrupt files
        raise InputError(f"{path}: cannot decode the image: {e}") from None


def resize_bilinear(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """Half-pixel-centre bilinear resize of an HxWxC image (float32 result)."""
    h, w = img.shape[:2]
    ys = np.clip((np.arange(height) + 0.5) * h / height - 0.5, 0, h - 1)
    xs = np.clip((np.arange(width) + 0.5) * w / width - 0.5, 0, w - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy, wx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]
    f = img.astype(np.float32)
    top = f[y0][:, x0] * (1 - wx) + f[y0][:, x1] * wx
    bottom = f[y1][:, x0] * (1 - wx) + f[y1][:, x1] * wx
    return top * (1 - wy) + bottom * wy


def _quantize(values: np.ndarray, detail: dict) -> np.ndarray:
    """Float values to the input's integer type with its scale and zero point (TFLite's
    quantization: round half away from zero, then saturate)."""
    dtype = np.dtype(detail["dtype"])
    scale, zp = detail.get("quantization", (0.0, 0))
    if not scale:
        raise InputError(f"input '{detail['name']}' is {dtype.name} without quantization "
                         f"parameters; --input_quantize cannot quantize for it")
    v = np.asarray(values, np.float64) / scale
    q = np.sign(v) * np.floor(np.abs(v) + 0.5) + zp
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


def image_to_input(img: np.ndarray, detail: dict, *, mean: float = 127.5, std: float = 127.5,
                   quantize: bool = False) -> np.ndarray:
    """Fit an RGB image to a [1,H,W,3] or NCHW [1,3,H,W] input: resize, then uint8 pixels as
    they are, int8 shifted by -128, float as (pixel - mean) / std (default [-1, 1], MobileNet's
    preprocessing); with ``quantize``, (pixel - mean) / std quantized with the input's scale and
    zero point."""
    shape = tuple(int(d) for d in detail["shape"])
    nchw = len(shape) == 4 and shape[1] == 3 and shape[3] != 3
    if len(shape) != 4 or (shape[-1] != 3 and not nchw):
        raise InputError(f"an image needs a [1,H,W,3] or [1,3,H,W] input, the model wants "
                         f"{list(shape)}")
    h, w = (shape[2], shape[3]) if nchw else (shape[1], shape[2])
    resized = resize_bilinear(img, h, w)
    dtype = np.dtype(detail["dtype"])
    if dtype.kind == "f":
        out = ((resized - mean) / std).astype(dtype)
    elif quantize:
        out = _quantize((resized - mean) / std, detail)
    elif dtype == np.uint8:
        out = np.clip(np.round(resized), 0, 255).astype(np.uint8)
    elif dtype == np.int8:
        out = (np.clip(np.round(resized), 0, 255) - 128).astype(np.int8)
    else:
        raise InputError(f"an image cannot feed a {dtype.name} input")
    if nchw:
        out = out.transpose(2, 0, 1)
    return np.ascontiguousarray(out[None])


def load_input(path: str, detail: dict, *, mean: float = 127.5, std: float = 127.5,
               quantize: bool = False) -> np.ndarray:
    """A model input from ``path``: a .npy with the exact shape (its dtype is left as it is:
    ``set_tensor`` rejects a mismatch as LiteRT does, unless ``quantize`` turns float values
    into the quantized input type), or an image."""
    if str(path).endswith(".npy"):
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise InputError(f"{path}: {e}") from None
        shape = tuple(int(d) for d in detail["shape"])
        if arr.shape != shape:
            raise InputError(f"{path}: shape {list(arr.shape)} does not match the input "
                             f"{list(shape)}")
        dtype = np.dtype(detail["dtype"])
        if quantize and arr.dtype.kind == "f" and dtype.kind in "iu":
            return _quantize(arr, detail)
        return arr
    try:
        return image_to_input(read_image(path), detail, mean=mean, std=std, quantize=quantize)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None


def class_colors(count: int = 256) -> np.ndarray:
    """The PASCAL VOC palette: class c's colour bits are c's bits, interleaved (bit 0 to red,
    1 to green, 2 to blue, from the top bit of each channel down)."""
    c = np.arange(count)
    colors = np.zeros((count, 3), np.uint8)
    for shift in range(8):
        for ch in range(3):
            colors[:, ch] |= (((c >> (3 * shift + ch)) & 1) << (7 - shift)).astype(np.uint8)
    return colors


def write_mask_png(path, class_map: np.ndarray) -> None:
    """A PNG of a [H,W] class map in the PASCAL VOC palette (needs Pillow)."""
    try:
        from PIL import Image   # optional: the images extra
    except ImportError:
        raise InputError(f"writing the PNG mask {path} needs {PILLOW_HINT}") from None
    img = Image.fromarray(np.clip(class_map, 0, 255).astype(np.uint8))   # "L"; "P" below
    img.putpalette(class_colors().reshape(-1).tolist())
    img.save(path)
