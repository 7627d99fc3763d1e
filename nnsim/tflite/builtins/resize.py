"""RESIZE_BILINEAR on the CPU (TFLite reference kernels: float template for float32 and uint8,
10-bit fixed point for int8 / int16)."""
from __future__ import annotations

import numpy as np

from nnsim.kernels.resize import resize_bilinear
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.options import ResizeBilinearOptions

_TYPES = tuple(np.dtype(t) for t in (np.float32, np.uint8, np.int8, np.int16))


class ResizeBilinear(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        opts = node.options(ResizeBilinearOptions)
        self.align, self.half = bool(opts.align_corners), bool(opts.half_pixel_centers)
        if self.align and self.half:
            raise node.error("align_corners and half_pixel_centers are both set")
        if node.dtype_in(0) not in _TYPES:
            raise node.error(f"type {node.dtype_in(0).name} is not supported",
                             unsupported=True)

    def _size(self, value):
        value = np.asarray(value).reshape(-1)
        if value.size != 2:
            raise self.error(f"size must hold 2 values, got {value.size}")
        h, w = int(value[0]), int(value[1])
        if h < 1 or w < 1:
            raise self.error(f"output size {h}x{w} must be positive")
        return h, w

    def prepare(self, shapes):
        if len(shapes[0]) != 4:
            raise self.error(f"input must be 4-D, got {shapes[0]}")
        size = self.node.const_input(1)
        if size is None:
            return [None]
        h, w = self._size(size)
        return [(shapes[0][0], h, w, shapes[0][3])]

    def eval(self, inputs):
        h, w = self._size(inputs[1])
        return [resize_bilinear(inputs[0], h, w, align_corners=self.align,
                                half_pixel_centers=self.half)]
