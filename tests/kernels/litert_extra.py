"""LiteRT operator codes used by the tests of the second op set (added to ``kernel_litert.OPS``
without editing it; existing entries win)."""

from __future__ import annotations

from . import kernel_litert

EXTRA_OPS = {
    "L2_NORMALIZATION": (11, "L2NormOptions"),
    "L2_POOL_2D": (12, "Pool2DOptions"),
    "RESIZE_BILINEAR": (23, "ResizeBilinearOptions"),
    "LOG_SOFTMAX": (50, "LogSoftmaxOptions"),
    "PRELU": (54, None),
    "TRANSPOSE_CONV": (67, "TransposeConvOptions"),
    "SUM": (74, "ReducerOptions"),
    "REDUCE_MAX": (82, "ReducerOptions"),
    "REDUCE_MIN": (89, "ReducerOptions"),
    "RESIZE_NEAREST_NEIGHBOR": (97, "ResizeNearestNeighborOptions"),
}
for _name, _entry in EXTRA_OPS.items():
    kernel_litert.OPS.setdefault(_name, _entry)

T = kernel_litert.T
run_op = kernel_litert.run_op
