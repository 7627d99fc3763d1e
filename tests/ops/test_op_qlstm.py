"""QUANTIZED_LSTM (NNAPI 95) on nnapi-reference.

Oracle: the expected values of AOSP runtime/test/specs/V1_3/qlstm_projection.mod.py and
qlstm_noprojection.mod.py (the generated spec_V1_3/qlstm_*.example.cpp hold the same numbers),
transcribed below; no V1_3 vectors exist in ../shared/cts. Plus AOSP's validation / prepare rules
(common/types/operations/src/QLSTM.cpp, common/cpu_operations/QLSTM.cpp).
"""
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from nnsim.errors import NnapiError
from nnsim.types import FL4, OperandType as T, OperationCode as C

from .ophelp import Opnd, feature_level, fl32, i32, run, tensor

B, I, U = 2, 5, 4
X = [90, 102, 13, 26, 38, 102, 13, 26, 51, 64]
I2I = [64, 77, 89, -102, -115, 13, 25, 38, -51, 64, -102, 89, -77, 64, -51, -64, -51, -38, -25,
       -13]
I2F = [-77, -13, 38, 25, 115, -64, -25, -51, 38, -102, -51, 38, -64, -51, -77, 38, -51, -77,
       -64, -64]
I2C = [-51, -38, -25, -13, -64, 64, -25, -38, -25, -77, 77, -13, -51, -38, -89, 89, -115, -64,
       102, 77]
I2O = [-102, -51, -25, -115, -13, -89, 38, -38, -102, -25, 77, -25, 51, -89, -38, -64, 13, 64,
       -77, -51]
BIAS_I = [644245, 3221226, 4724464, 8160438]
BIAS_F = [2147484, -6442451, -4294968, 2147484]
BIAS_C = [-1073742, 15461883, 5368709, 1717987]
BIAS_O = [1073742, -214748, 4294968, 2147484]
R2I = [-25, -38, 51, 13, -64, 115, -25, -38, -89, 6, -25, -77]
R2F = [-64, -38, -64, -25, 77, 51, 115, 38, -13, 25, 64, 25]
R2C = [-38, 25, 13, -38, 102, -10, -25, 38, 102, -77, -13, 25]
R2O = [38, -13, 13, -25, -64, -89, -25, -77, -13, -51, -89, -25]
# the no-projection spec (output size 4) has a fourth recurrent column
R2F_4 = [-64, -38, -64, -25, 77, 51, 115, 38, -13, 25, 64, 25, 25, 38, -13, 51]
R2C_4 = [-38, 25, 13, -38, 102, -10, -25, 38, 102, -77, -13, 25, 38, -13, 25, 64]
R2O_4 = [38, -13, 13, -25, -64, -89, -25, -77, -13, -51, -89, -25, 13, 64, 25, -38]
PROJ = [-25, 51, 3, -51, 25, 127, 77, 20, 18, 51, -102, 51]
LN = ([3277, 6553, 9830, 16384], [6553, 6553, 13107, 9830], [22937, 6553, 9830, 26214],
      [19660, 6553, 6553, 16384])

W_SCALE, STATE_SCALE, LN_SCALE = 0.00784314, 3.05176e-05, 3.05182e-05


def none(type_, dims):
    """An omitted operand; quantized types still need a valid scale to be added."""
    scale = {T.TENSOR_QUANT8_SYMM: W_SCALE, T.TENSOR_QUANT16_SYMM: 1.0}.get(type_, 0.0)
    return Opnd(type_, tuple(dims), scale=scale, omitted=True)


def qlstm_inputs(n_out, *, cifg, projection, peephole=None, layer_norm=True, clips=(0.0, 0.0)):
    """The 32 operands of the AOSP spec; input, previous output and cell state are fed."""
    w = lambda dims, v: tensor(T.TENSOR_QUANT8_SYMM, dims, W_SCALE, 0, v)   # noqa: E731
    bias = lambda v: tensor(T.TENSOR_INT32, (U,), 0.0, 0, v)                 # noqa: E731
    q16 = lambda v, scale: tensor(T.TENSOR_QUANT16_SYMM, (U,), scale, 0, v)  # noqa: E731
    rec = (R2F, R2C, R2O) if n_out == 3 else (R2F_4, R2C_4, R2O_4)
    ops = [tensor(T.TENSOR_QUANT8_ASYMM_SIGNED, (B, I), 0.0078125, 0),
           none(T.TENSOR_QUANT8_SYMM, (U, I)) if cifg else w((U, I), I2I),
           w((U, I), I2F), w((U, I), I2C), w((U, I), I2O),
           none(T.TENSOR_QUANT8_SYMM, (U, n_out)) if cifg else w((U, n_out), R2I),
           w((U, n_out), rec[0]), w((U, n_out), rec[1]), w((U, n_out), rec[2])]
    for k in range(3):
        ops.append(q16(peephole[k], 1.0) if peephole and peephole[k] is not None
                   else none(T.TENSOR_QUANT16_SYMM, (U,)))
    ops += [none(T.TENSOR_INT32, (U,)) if cifg else bias(BIAS_I), bias(BIAS_F), bias(BIAS_C),
            bias(BIAS_O)]
    if projection:
        ops += [tensor(T.TENSOR_QUANT8_SYMM, (n_out, U), 0.00392157, 0, PROJ),
                tensor(T.TENSOR_INT32, (n_out,), 0.0, 0, [0] * n_out)]
    else:
        ops += [none(T.TENSOR_QUANT8_SYMM, (n_out, U)), none(T.TENSOR_INT32, (n_out,))]
    ops += [tensor(T.TENSOR_QUANT8_ASYMM_SIGNED, (B, n_out), STATE_SCALE, 0),
            tensor(T.TENSOR_QUANT16_SYMM, (B, U), STATE_SCALE, 0)]
    for g in range(4):
        ops.append(none(T.TENSOR_QUANT16_SYMM, (U,)) if (not layer_norm or (cifg and g == 0))
                   else q16(LN[g], LN_SCALE))
    ops += [fl32(clips[0]), fl32(clips[1]), fl32(0.007059), fl32(0.007812), fl32(0.007059),
            fl32(0.007812), i32(0), fl32(0.007)]
    return ops


def outputs(n_out):
    return [tensor(T.TENSOR_QUANT8_ASYMM_SIGNED, (B, n_out), STATE_SCALE, 0),
            tensor(T.TENSOR_QUANT16_SYMM, (B, U), STATE_SCALE, 0),
            tensor(T.TENSOR_QUANT8_ASYMM_SIGNED, (B, n_out), STATE_SCALE, 0)]


def run_qlstm(n_out, prev_out=None, prev_cell=None, **kw):
    prev_out = [0] * (B * n_out) if prev_out is None else prev_out
    prev_cell = [0] * (B * U) if prev_cell is None else prev_cell
    return run(C.QUANTIZED_LSTM, qlstm_inputs(n_out, **kw), outputs(n_out),
               [X, prev_out, prev_cell])


# -- AOSP spec vectors --------------------------------------------------------------------------
CASES = {
    # qlstm_projection.mod.py example 1: layer norm, projection
    "projection": dict(n_out=3, cifg=False, projection=True,
                       out=[127, 127, -108, -67, 127, 127],
                       cell=[-14650, 8939, 5771, 6715, -11843, 7847, 1508, 12939]),
    # qlstm_projection.mod.py example 2: CIFG, layer norm, projection
    "cifg_projection": dict(n_out=3, cifg=True, projection=True,
                            out=[127, 127, 127, -128, 127, 127],
                            cell=[-11692, 9960, 5491, 8861, -9422, 7726, 2056, 13149]),
    # qlstm_noprojection.mod.py: CIFG, layer norm
    "cifg_noprojection": dict(n_out=4, cifg=True, projection=False,
                              out=[-15, 21, 14, 20, -15, 15, 5, 27],
                              cell=[-11692, 9960, 5491, 8861, -9422, 7726, 2056, 13149]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_aosp_spec_vectors(name):
    case = CASES[name]
    state, cell, out = run_qlstm(case["n_out"], cifg=case["cifg"], projection=case["projection"])
    assert state.dtype == np.int8 and cell.dtype == np.int16 and out.dtype == np.int8
    np.testing.assert_array_equal(out.ravel(), case["out"])
    np.testing.assert_array_equal(state.ravel(), case["out"])
    np.testing.assert_array_equal(cell.ravel(), case["cell"])


def test_spec_vectors_without_jit():
    """The same vector with NNSIM_DISABLE_JIT=1 (the cores run as plain Python)."""
    code = ("from tests.ops.test_op_qlstm import CASES, run_qlstm\n"
            "c = CASES['projection']\n"
            "s, cell, o = run_qlstm(3, cifg=False, projection=True)\n"
            "assert list(o.ravel()) == c['out'] and list(cell.ravel()) == c['cell']\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, NNSIM_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_cell_clip_bounds_the_cell_state():
    # AOSP truncates clip / cell scale in float32: 0.25 / 3.05176e-05 = 8191.99... -> 8191
    _, cell, _ = run_qlstm(3, cifg=False, projection=True, clips=(0.25, 0.0))
    ref = np.asarray(CASES["projection"]["cell"])
    np.testing.assert_array_equal(np.abs(cell.ravel())[np.abs(ref) > 8191], 8191)
    keep = np.abs(ref) <= 8191
    np.testing.assert_array_equal(cell.ravel()[keep], ref[keep])


def test_projection_clip_uses_the_projection_weights_scale():
    # AOSP: int(clip / projection_weights.scale); 0.2 / 0.00392157 -> 50
    state, _, out = run_qlstm(3, cifg=False, projection=True, clips=(0.0, 0.2))
    ref = np.clip(CASES["projection"]["out"], -50, 50)
    np.testing.assert_array_equal(out.ravel(), ref)


def test_peephole_changes_the_gates_and_zero_peephole_does_not():
    zero = ([0] * U, [0] * U, [0] * U)
    _, cell0, out0 = run_qlstm(3, cifg=False, projection=True, peephole=zero,
                               prev_cell=[3000] * (B * U))
    _, cell_n, out_n = run_qlstm(3, cifg=False, projection=True,
                                 prev_cell=[3000] * (B * U))
    np.testing.assert_array_equal(cell0, cell_n)
    np.testing.assert_array_equal(out0, out_n)
    big = ([20000] * U, [20000] * U, [20000] * U)
    _, cell_p, _ = run_qlstm(3, cifg=False, projection=True, peephole=big,
                             prev_cell=[3000] * (B * U))
    assert not np.array_equal(cell_p, cell_n)


def test_second_step_feeds_state():
    """Two chained steps: the second differs from the first and stays deterministic."""
    s1, c1, _ = run_qlstm(3, cifg=False, projection=True)
    s2, c2, o2 = run_qlstm(3, list(s1.ravel()), list(c1.ravel()), cifg=False, projection=True)
    s2b, c2b, _ = run_qlstm(3, list(s1.ravel()), list(c1.ravel()), cifg=False, projection=True)
    assert not np.array_equal(c2, c1)
    np.testing.assert_array_equal(c2, c2b)
    np.testing.assert_array_equal(s2, o2)


# -- validation ---------------------------------------------------------------------------------
def test_feature_level_is_4():
    assert feature_level(C.QUANTIZED_LSTM, qlstm_inputs(3, cifg=False, projection=True),
                         outputs(3)) == FL4


@pytest.mark.parametrize("index,new_type", [(0, T.TENSOR_QUANT8_ASYMM),
                                            (2, T.TENSOR_QUANT8_ASYMM_SIGNED),
                                            (19, T.TENSOR_QUANT8_SYMM),
                                            (30, T.FLOAT32)])
def test_wrong_input_type_is_rejected(index, new_type):
    ops = qlstm_inputs(3, cifg=False, projection=True)
    o = ops[index]
    ops[index] = replace(o, type=new_type, value=(0.0 if new_type == T.FLOAT32 else o.value))
    with pytest.raises(NnapiError):
        feature_level(C.QUANTIZED_LSTM, ops, outputs(3))


def test_wrong_input_count_is_rejected():
    with pytest.raises(NnapiError):
        feature_level(C.QUANTIZED_LSTM, qlstm_inputs(3, cifg=False, projection=True)[:31],
                      outputs(3))


def test_cifg_with_input_gate_bias_fails_at_prepare():
    ops = qlstm_inputs(3, cifg=True, projection=True)
    ops[12] = tensor(T.TENSOR_INT32, (U,), 0.0, 0, BIAS_I)
    with pytest.raises(NnapiError, match="CIFG"):
        run(C.QUANTIZED_LSTM, ops, outputs(3), [X, [0] * 6, [0] * 8])


def test_partial_layer_norm_fails_at_prepare():
    ops = qlstm_inputs(3, cifg=False, projection=True)
    ops[21] = none(T.TENSOR_QUANT16_SYMM, (U,))
    with pytest.raises(NnapiError, match="layer norm"):
        run(C.QUANTIZED_LSTM, ops, outputs(3), [X, [0] * 6, [0] * 8])


def test_cell_scale_must_be_a_power_of_two():
    ops = qlstm_inputs(3, cifg=False, projection=True)
    ops[19] = replace(ops[19], scale=3e-5)
    out = outputs(3)
    out[1] = replace(out[1], scale=3e-5)
    with pytest.raises(NnapiError, match="power of two"):
        run(C.QUANTIZED_LSTM, ops, out, [X, [0] * 6, [0] * 8])
