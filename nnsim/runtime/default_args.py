"""Trailing optional arguments equal to their defaults (ModelBuilder::removeTrailingArgumentsWithDefaultValues).

Some drivers reject an operation by argument count even when the optional arguments hold their
default values (b/147105700), so the runtime strips them after validation and GraphDump: the
compiled and partitioned model sees the shortened argument list (nnapi-runtime.md 1.5 step 7).
"""
from __future__ import annotations


from nnsim.types import OperandLifeTime, OperandType, OperationCode

C = OperationCode

# op -> {input count: [(position, default value), ...] in argument order}
_TABLE = {
    C.CONV_2D: {13: [(10, False), (11, 1), (12, 1)], 10: [(7, False), (8, 1), (9, 1)],
                11: [(10, False)], 8: [(7, False)]},
    C.DEPTHWISE_CONV_2D: {14: [(11, False), (12, 1), (13, 1)], 11: [(8, False), (9, 1), (10, 1)],
                          12: [(11, False)], 9: [(8, False)]},
    C.AVERAGE_POOL_2D: {11: [(10, False)], 8: [(7, False)]},
    C.MAX_POOL_2D: {11: [(10, False)], 8: [(7, False)]},
    C.L2_POOL_2D: {11: [(10, False)], 8: [(7, False)]},
    C.SOFTMAX: {3: [(2, -1)]},
    C.L2_NORMALIZATION: {2: [(1, -1)]},
    C.LOCAL_RESPONSE_NORMALIZATION: {6: [(5, -1)]},
    C.BATCH_TO_SPACE_ND: {3: [(2, False)]},
    C.SPACE_TO_BATCH_ND: {4: [(3, False)]},
    C.DEPTH_TO_SPACE: {3: [(2, False)]},
    C.SPACE_TO_DEPTH: {3: [(2, False)]},
    C.RESIZE_BILINEAR: {4: [(3, False)], 5: [(3, False), (4, False)],
                        6: [(3, False), (4, False), (5, False)]},
    # the layout (input 3) is required here: only align_corners / half_pixel_centers go
    # (ModelBuilder.cpp: "4 < inputCount && inputCount <= 6", getCount(4, ...))
    C.RESIZE_NEAREST_NEIGHBOR: {5: [(4, False)], 6: [(4, False), (5, False)]},
}

# Dilation factors are removed only as a pair.
_PAIRED = {C.CONV_2D, C.DEPTHWISE_CONV_2D}


def _is_default(operands, index: int, default) -> bool:
    op = operands[index]
    if op.lifetime != OperandLifeTime.CONSTANT_COPY or op.value is None:
        return False
    v = op.array()
    if isinstance(default, bool):
        return op.type == OperandType.BOOL and bool(v) is default
    return op.type == OperandType.INT32 and int(v) == default


def trailing_arguments_to_remove(operands, op) -> int:
    """How many trailing inputs of ``op`` hold their default value and can be dropped."""
    try:
        table = _TABLE.get(C(op.type))
    except ValueError:
        return 0
    if not table:
        return 0
    args = table.get(len(op.inputs))
    if not args:
        return 0
    n = 0
    if op.type in _PAIRED and len(args) == 3:
        # The layout flag must be a BOOL, otherwise this count is the other padding form
        # without optional arguments (e.g. explicit CONV_2D with 10 inputs).
        if operands[op.inputs[args[0][0]]].type != OperandType.BOOL:
            return 0
        (lay_pos, lay_def), (dw_pos, dw_def), (dh_pos, dh_def) = args
        if _is_default(operands, op.inputs[dw_pos], 1) and _is_default(operands, op.inputs[dh_pos], 1):
            n = 2
            if _is_default(operands, op.inputs[lay_pos], False):
                n = 3
        return n
    for pos, default in reversed(args):
        if _is_default(operands, op.inputs[pos], default):
            n += 1
        else:
            break
    return n
