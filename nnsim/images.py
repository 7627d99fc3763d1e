"""Input loading for the CLI: .npy arrays and images (BMP and PPM natively, others via Pillow
when installed), resized to a model input with bilinear sampling."""
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


def _read_ppm(data: bytes) -> np.ndarray:
    parts = data.split(maxsplit=4)
    if len(parts) < 5 or parts[0] != b"P6":
        raise InputError("only binary PPM (P6) is supported")
    w, h, maxval = int(parts[1]), int(parts[2]), int(parts[3])
    if maxval != 255:
        raise InputError("only 8-bit PPM is supported")
    return np.frombuffer(parts[4][:w * h * 3], np.uint8).reshape(h, w, 3)


def read_image(path: str | Path) -> np.ndarray:
    """HxWx3 uint8 RGB."""
    data = Path(path).read_bytes()
    if data[:2] == b"BM":
        return _read_bmp(data)
    if data[:2] == b"P6":
        return _read_ppm(data)
    try:
        from PIL import Image
    except ImportError:
        raise InputError(f"{path}: only .npy, BMP and PPM inputs are supported without "
                         f"Pillow (pip install pillow)") from None
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


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


def image_to_input(img: np.ndarray, detail: dict) -> np.ndarray:
    """Fit an RGB image to a [1,H,W,3] input: resize, then uint8 as is, int8 shifted by -128,
    float scaled to [-1, 1] (MobileNet preprocessing)."""
    shape = tuple(int(d) for d in detail["shape"])
    if len(shape) != 4 or shape[-1] != 3:
        raise InputError(f"an image needs a [1,H,W,3] input, the model wants {list(shape)}")
    resized = resize_bilinear(img, shape[1], shape[2])
    dtype = np.dtype(detail["dtype"])
    if dtype == np.uint8:
        out = np.clip(np.round(resized), 0, 255).astype(np.uint8)
    elif dtype == np.int8:
        out = (np.clip(np.round(resized), 0, 255) - 128).astype(np.int8)
    else:
        out = (resized / 127.5 - 1.0).astype(dtype)
    return out[None]


def load_input(path: str, detail: dict) -> np.ndarray:
    """A model input from ``path`` (.npy with the exact shape and dtype, or an image)."""
    if str(path).endswith(".npy"):
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise InputError(f"{path}: {e}") from None
        shape = tuple(int(d) for d in detail["shape"])
        if arr.shape != shape:
            raise InputError(f"{path}: shape {list(arr.shape)} does not match the input "
                             f"{list(shape)}")
        return arr.astype(detail["dtype"], copy=False)
    try:
        return image_to_input(read_image(path), detail)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
