"""L2_POOL_2D (OperationCode 12).

Inputs and padding forms are AVERAGE_POOL_2D's (``nnsim.ops.pooling``): explicit (10 or 11
inputs) or implicit (7 or 8), [layout BOOL]. Output 0 [N,OH,OW,C]:
``sqrt(mean of the squares of the in-image taps)`` then the fused activation.

Types (T13 Pooling.cpp): float32 FL1; float16 or a layout argument FL3; quantized inputs are
rejected.
"""
from __future__ import annotations

from nnsim.kernels.l2_pool import l2_pool_2d
from nnsim.ops import _common as cm
from nnsim.ops import pooling
from nnsim.ops.base import OperationSpec
from nnsim.types import OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts((7, 8, 10, 11), 1)
    ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    return pooling.validate(ctx)


def execute(ctx):
    p = pooling._params(ctx)  # the pools' shared argument parsing and runtime checks
    nchw = p.pop("nchw")
    for k in ("n", "h", "w", "c"):
        del p[k]
    y = l2_pool_2d(cm.to_nhwc(ctx.input(0), nchw), **p)
    ctx.set_output(0, cm.from_nhwc(y, nchw))


SPEC = OperationSpec(OperationCode.L2_POOL_2D, validate, pooling.prepare, execute)
