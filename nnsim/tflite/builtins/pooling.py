"""AVERAGE_POOL_2D and MAX_POOL_2D on the CPU (TFLite reference semantics).

Quantized pools work on raw values (input and output share scale and zero point); only
in-image taps count; the fused activation clamps in the output domain.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.pooling import average_pool_2d, bind_pool_2d, max_pool_2d
from nnsim.tflite.builtins._base import BuiltinOp, fuse_code, tflite_padding
from nnsim.tflite.options import Pool2DOptions

_TYPES = (np.dtype(np.float32), np.dtype(np.uint8), np.dtype(np.int8))


class _Pool(BuiltinOp):
    kernel = None

    def __init__(self, node):
        super().__init__(node)
        self.opts = node.options(Pool2DOptions)
        self.fuse = fuse_code(node, self.opts.fused_activation_function)
        if node.dtype_in(0) not in _TYPES:
            raise node.error(f"input type {node.dtype_in(0).name} is not supported",
                             unsupported=True)
        self.q = {}
        if node.dtype_in(0) != np.float32:
            scale, zp = node.quant_out(0)
            self.q = dict(out_scale=scale, out_zp=zp)

    def prepare(self, shapes):
        x_shape, o = shapes[0], self.opts
        if len(x_shape) != 4:
            raise self.error(f"input must be 4-D, got {x_shape}")
        oh, pt, pb = tflite_padding(o.padding, x_shape[1], o.filter_height, o.stride_h)
        ow, pl, pr = tflite_padding(o.padding, x_shape[2], o.filter_width, o.stride_w)
        self.geo = dict(filter_h=o.filter_height, filter_w=o.filter_width, stride_h=o.stride_h,
                        stride_w=o.stride_w, pad_top=pt, pad_bottom=pb, pad_left=pl,
                        pad_right=pr)
        return [(x_shape[0], oh, ow, x_shape[3])]

    def eval(self, inputs):
        return [type(self).kernel(inputs[0], fuse=self.fuse, **self.geo, **self.q)]

    def adopt_output(self, old, new):
        """Always: :meth:`bind` writes into whatever buffer the interpreter gives it."""
        return True

    def bind(self, inputs, outputs):
        """The kernel writing into the interpreter's fixed output buffer (no wrapper work)."""
        return bind_pool_2d(self.kind, inputs[0], outputs[0], fuse=self.fuse, **self.geo,
                            **self.q)


class AveragePool2D(_Pool):
    kernel, kind = staticmethod(average_pool_2d), "avg"


class MaxPool2D(_Pool):
    kernel, kind = staticmethod(max_pool_2d), "max"
