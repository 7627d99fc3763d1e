"""removeTrailingArgumentsWithDefaultValues (nnapi-runtime.md 1.5 step 7; AOSP
runtime/ModelBuilder.cpp getNumberOfTrailingArgumentsToRemove): only optional arguments go."""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C


def _resize_nearest(flags):
    """RESIZE_NEAREST_NEIGHBOR with layout=false and the given trailing bool flags."""
    m = ModelBuilder()
    m.add_operand(OperandTypeSpec(T.TENSOR_FLOAT32, (1, 2, 2, 1)))
    for _ in range(2):
        m.add_operand(OperandTypeSpec(T.INT32))
    for _ in range(1 + len(flags)):
        m.add_operand(OperandTypeSpec(T.BOOL))
    m.add_operand(OperandTypeSpec(T.TENSOR_FLOAT32, (1, 4, 4, 1)))
    m.set_operand_value(1, np.array(4, np.int32))
    m.set_operand_value(2, np.array(4, np.int32))
    for k, value in enumerate((False,) + tuple(flags)):
        m.set_operand_value(3 + k, np.array(value, np.bool_))
    n = 4 + len(flags)
    m.add_operation(int(C.RESIZE_NEAREST_NEIGHBOR), list(range(n)), [n])
    m.identify_inputs_and_outputs([0], [n])
    m.finish()
    return m


@pytest.mark.parametrize("flags,kept", [((), 4), ((False,), 4), ((False, False), 4),
                                        ((True, False), 5), ((False, True), 6)])
def test_resize_nearest_keeps_its_required_layout(flags, kept):
    """Its layout (input 3) is required: only align_corners / half_pixel_centers may go."""
    assert len(_resize_nearest(flags).compiled_inputs[0]) == kept
