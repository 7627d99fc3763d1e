"""CPU builtins for TFLite's recurrent layers: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, RNN and
UNIDIRECTIONAL_SEQUENCE_RNN (float; see ``_RnnBase``) and SVDF (float, int8; ``Svdf``).

LiteRT ``kernels/lstm.cc`` and ``unidirectional_sequence_lstm.cc`` (full kernel): inputs 0 input,
1-4 input-to-{input, forget, cell, output} weights, 5-8 recurrent-to-* weights, 9-11
cell-to-{input, forget, output} (peephole), 12-15 gate biases, 16 projection weights, 17
projection bias, 18 output state and 19 cell state (variable tensors: updated in place, kept
from invoke to invoke), 20-23 layer-norm coefficients. Float32, or the fully integer kernel
(int8 input, weights and output state, int16 cell state, int32 biases, int16 layer-norm
coefficients) that reads the scales of its five intermediate tensors. Hybrid (float input with
int8 weights) and the diagonal-recurrent variant are refused. The state and weight constants are
packed once per node; see ``nnsim.kernels.tfl_lstm`` for the arithmetic.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import tfl_lstm, tfl_rnn
from nnsim.tflite import options as O
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType

__all__ = ["BUILTINS", "Lstm", "Rnn", "UnidirectionalSequenceLstm", "UnidirectionalSequenceRnn",
           "Svdf"]

_IX = (1, 2, 3, 4)          # input-to-gate weights, gates i, f, c, o
_IH = (5, 6, 7, 8)          # recurrent-to-gate weights
_IP = (9, 10, 11)           # peephole i, f, o
_IB = (12, 13, 14, 15)      # gate biases
_ILN = (20, 21, 22, 23)     # layer-norm coefficients
_ACTS = {Act.RELU: 1, Act.RELU_N1_TO_1: 2, Act.RELU6: 3, Act.TANH: 4}


class _LstmBase(BuiltinOp):
    """One LSTM layer; subclasses say whether the input has a time axis and its layout."""

    sequence = True

    def __init__(self, node, opts, time_major: bool):
        super().__init__(node)
        self.time_major = time_major
        n_in = len(node.op.inputs)
        if n_in not in (20, 24):
            raise node.error(f"the LSTM full kernel takes 20 or 24 inputs, got {n_in}")
        if opts.fused_activation_function not in _ACTS:
            raise node.error(f"LSTM activation {Act(opts.fused_activation_function).name} is "
                             f"not supported", unsupported=True)
        if getattr(opts, "diagonal_recurrent_tensors", False):
            raise node.error("diagonal recurrent weights are not supported", unsupported=True)
        self.act = _ACTS[Act(opts.fused_activation_function)]
        self.cell_clip, self.proj_clip = float(opts.cell_clip), float(opts.proj_clip)
        for k in (*_IX[1:], *_IH[1:], 18, 19):
            node.require_input(k)
        for k in range(1, 24):
            if k in (18, 19) or node.input(k) is None:
                continue
            if node.const_input(k) is None:
                raise node.error(f"input {k} is not a constant", unsupported=True)
        self.cifg = node.input(1) is None
        self.use_peep = node.input(11) is not None
        self.use_proj = node.input(16) is not None
        self.use_ln = n_in == 24 and node.input(21) is not None
        wx = [None if node.input(k) is None else node.const_input(k) for k in _IX]
        self.n_cell, self.n_input = wx[3].shape
        wh = [None if node.input(k) is None else node.const_input(k) for k in _IH]
        if wh[3].ndim != 2:
            raise node.error("diagonal recurrent weights are not supported", unsupported=True)
        self.n_output = wh[3].shape[1]
        self.integer = node.require_input(0).type == TensorType.INT8
        if not self.integer and node.require_input(0).type != TensorType.FLOAT32:
            raise node.error(f"input type {node.require_input(0).type.name} is not supported",
                             unsupported=True)
        if not self.integer and node.require_input(1 if not self.cifg else 2).type != \
                TensorType.FLOAT32:
            raise node.error("hybrid LSTM (float input, quantized weights) is not supported",
                             unsupported=True)
        pack = self._pack_integer if self.integer else self._pack_float
        pack(wx, wh)

    # -- packing ---------------------------------------------------------------------------------
    def _stack(self, arrays, shape, dtype):
        out = np.zeros((len(arrays),) + shape, dtype)
        for g, a in enumerate(arrays):
            if a is not None:
                out[g] = np.asarray(a, dtype).reshape(shape)
        return out

    def _optional(self, indices, shape, dtype):
        node = self.node
        return self._stack([None if node.input(k) is None else node.const_input(k)
                            for k in indices], shape, dtype)

    def _pack_float(self, wx, wh):
        c, i, o = self.n_cell, self.n_input, self.n_output
        f32 = np.float32
        self.wx = self._stack(wx, (c, i), f32)
        self.wh = self._stack(wh, (c, o), f32)
        self.peep = self._optional(_IP, (c,), f32)
        self.bias = self._optional(_IB, (c,), f32)
        self.ln = self._optional(_ILN, (c,), f32) if self.use_ln else np.zeros((4, c), f32)
        node = self.node
        self.proj = node.const_input(16).astype(f32) if self.use_proj else np.zeros((o, c), f32)
        pb = node.const_input(17) if node.input(17) is not None else None
        self.proj_bias = np.zeros(o, f32) if pb is None else pb.astype(f32)

    def _pack_integer(self, wx, wh):
        node = self.node
        c, i, o = self.n_cell, self.n_input, self.n_output
        inter = node.op.intermediates
        if len(inter) != 5:
            raise node.error(f"the integer LSTM needs 5 intermediate tensors, got {len(inter)}")
        if self.use_peep and self.use_proj and o != c:
            raise node.error("integer LSTM with peephole and projection of another size is "
                             "not supported", unsupported=True)
        q = [node.require_quant(node.tensor(k)) for k in inter]
        in_q = node.quant_in(0)
        st_q = node.require_quant(node.input(18))
        cell_scale_f, _ = node.require_quant(node.input(19))
        cell_bits = float(np.log2(cell_scale_f))
        if cell_bits != round(cell_bits) or not -15 <= cell_bits <= -9:
            raise node.error(f"cell state scale {cell_scale_f} is not a power of two in "
                             f"[2**-15, 2**-9]", unsupported=True)
        scale = (lambda k: node.require_quant(node.input(k))[0])
        wscales = [(None, None) if wx[g] is None else (scale(_IX[g]), scale(_IH[g]))
                   for g in range(4)]
        peep_scales = [scale(k) if node.input(k) is not None else 1.0 for k in _IP]
        ln_scales = [scale(k) if self.use_ln and node.input(k) is not None else 1.0
                     for k in _ILN]
        self.params = tfl_lstm.integer_lstm_params(
            input_q=in_q, state_q=st_q, cell_scale_f=cell_scale_f, weight_scales=wscales,
            peep_scales=peep_scales, ln_scales=ln_scales,
            proj_scale=scale(16) if self.use_proj else 1.0, gate_q=q[:4], hidden_q=q[4],
            cell_clip=self.cell_clip, proj_clip=self.proj_clip,
            output_scale=node.require_quant(node.output(0))[0], use_ln=self.use_ln,
            use_peep=self.use_peep, use_proj=self.use_proj, cifg=self.cifg)
        self.state_zp = st_q[1]
        i8 = np.int8
        self.wx = self._stack(wx, (c, i), i8)
        self.wh = self._stack(wh, (c, o), i8)
        biases = [None if node.input(k) is None else node.const_input(k) for k in _IB]
        self.bx = np.zeros((4, c), np.int64)
        self.bh = np.zeros((4, c), np.int64)
        for g in range(4):
            if wx[g] is None:
                continue
            gate_bias = None if self.use_ln else biases[g]
            self.bx[g] = tfl_lstm.zero_point_bias(self.wx[g], -in_q[1], gate_bias)
            self.bh[g] = tfl_lstm.zero_point_bias(self.wh[g], -st_q[1])
        self.peep = self._optional(_IP, (c,), np.int16)
        self.ln = self._optional(_ILN, (c,), np.int16) if self.use_ln else \
            np.zeros((4, c), np.int16)
        self.lnb = self._stack(biases, (c,), np.int64)
        self.proj = node.const_input(16).astype(i8) if self.use_proj else np.zeros((o, c), i8)
        pb = node.const_input(17) if node.input(17) is not None else None
        self.pbias = tfl_lstm.zero_point_bias(self.proj, q[4][1], pb) if self.use_proj else \
            np.zeros(o, np.int64)

    # -- running ---------------------------------------------------------------------------------
    def prepare(self, shapes):
        shape = shapes[0]
        want = 3 if self.sequence else 2
        if len(shape) != want or shape[-1] != self.n_input:
            raise self.error(f"input shape {shape} does not match the weights (rank {want}, "
                             f"{self.n_input} features)")
        batch = shape[1] if self.time_major else shape[0]
        for k, width in ((18, self.n_output), (19, self.n_cell)):
            if shapes[k] is not None and int(np.prod(shapes[k])) != batch * width:
                raise self.error(f"state input {k} has shape {shapes[k]}, expected "
                                 f"{batch * width} values")
        return [tuple(shape[:-1]) + (self.n_output,)]

    def _views(self, x, out):
        """[batch, time, features] views of the input and the output."""
        if not self.sequence:
            return x[:, None, :], out[:, None, :]
        if self.time_major:
            return x.transpose(1, 0, 2), out.transpose(1, 0, 2)
        return x, out

    def _run(self, x, h_state, c_state, out):
        xv, ov = self._views(x, out)
        batch = xv.shape[0]
        h = h_state.reshape(batch, self.n_output)
        c = c_state.reshape(batch, self.n_cell)
        if self.integer:
            tfl_lstm.lstm_integer(xv, self.wx, self.wh, self.bx, self.bh, self.peep, self.ln,
                                  self.lnb, self.proj, self.pbias, self.params,
                                  state_zp=self.state_zp, cifg=self.cifg,
                                  use_peep=self.use_peep, use_ln=self.use_ln,
                                  use_proj=self.use_proj, reverse=False, h=h, c=c, out=ov)
        else:
            tfl_lstm.lstm_float(xv, self.wx, self.wh, self.peep, self.ln, self.bias, self.proj,
                                self.proj_bias, cifg=self.cifg, use_peep=self.use_peep,
                                use_ln=self.use_ln, use_proj=self.use_proj, act=self.act,
                                cell_clip=self.cell_clip, proj_clip=self.proj_clip,
                                reverse=False, h=h, c=c, out=ov)

    def eval(self, inputs):
        x = inputs[0]
        out = np.empty(tuple(x.shape[:-1]) + (self.n_output,), x.dtype)
        self._run(x, inputs[18], inputs[19], out)
        return [out]

    def bind(self, inputs, outputs):
        x, h, c, out = inputs[0], inputs[18], inputs[19], outputs[0]
        if any(a is None or not a.flags.c_contiguous for a in (x, h, c, out)):
            return None
        return lambda: self._run(x, h, c, out)


class UnidirectionalSequenceLstm(_LstmBase):
    """UNIDIRECTIONAL_SEQUENCE_LSTM: input [batch, time, input] (time_major: [time, batch,
    input]), output [.., n_output]."""

    def __init__(self, node):
        opts = node.options(O.UnidirectionalSequenceLSTMOptions)
        super().__init__(node, opts, bool(opts.time_major))


class Lstm(_LstmBase):
    """LSTM (full kernel): one step, input [batch, input], output [batch, n_output]."""

    sequence = False

    def __init__(self, node):
        opts = node.options(O.LSTMOptions)
        if opts.kernel_type != 0:
            raise node.error("the BASIC LSTM kernel is not supported", unsupported=True)
        super().__init__(node, opts, False)


BUILTINS: dict = {
    B.LSTM: Lstm,
    B.UNIDIRECTIONAL_SEQUENCE_LSTM: UnidirectionalSequenceLstm,
}


class _RnnBase(BuiltinOp):
    """Float RNN layer: inputs 0 input, 1 weights [units, input], 2 recurrent weights
    [units, units], 3 bias [units], 4 hidden state (variable); output [.., units]."""

    sequence = True

    def __init__(self, node, act, time_major: bool):
        super().__init__(node)
        self.time_major = time_major
        if Act(act) not in (Act.NONE, *_ACTS):
            raise node.error(f"RNN activation {Act(act).name} is not supported",
                             unsupported=True)
        self.act = _ACTS.get(Act(act), 0)
        for k in range(5):
            node.require_input(k)
        if any(node.input(k).type != TensorType.FLOAT32 for k in range(4)):
            raise node.error("only the float32 RNN is supported (not the hybrid one)",
                             unsupported=True)
        if any(node.const_input(k) is None for k in (1, 2, 3)):
            raise node.error("RNN weights and bias must be constants", unsupported=True)
        self.w = np.ascontiguousarray(node.const_input(1), np.float32)
        self.r = np.ascontiguousarray(node.const_input(2), np.float32)
        self.bias = np.ascontiguousarray(node.const_input(3), np.float32)
        self.units, self.n_input = self.w.shape

    def prepare(self, shapes):
        shape = shapes[0]
        want = 3 if self.sequence else 2
        if len(shape) != want or shape[-1] != self.n_input:
            raise self.error(f"input shape {shape} does not match the weights")
        return [tuple(shape[:-1]) + (self.units,)]

    def _run(self, x, h_state, out):
        if not self.sequence:
            xv, ov = x[:, None, :], out[:, None, :]
        elif self.time_major:
            xv, ov = x.transpose(1, 0, 2), out.transpose(1, 0, 2)
        else:
            xv, ov = x, out
        h = h_state.reshape(xv.shape[0], self.units)
        tfl_rnn.rnn_float(xv, self.w, self.r, self.bias, act=self.act, reverse=False, h=h,
                          out=ov)

    def eval(self, inputs):
        x = inputs[0]
        out = np.empty(tuple(x.shape[:-1]) + (self.units,), np.float32)
        self._run(x, inputs[4], out)
        return [out]

    def bind(self, inputs, outputs):
        x, h, out = inputs[0], inputs[4], outputs[0]
        if any(a is None or not a.flags.c_contiguous for a in (x, h, out)):
            return None
        return lambda: self._run(x, h, out)


class Rnn(_RnnBase):
    """RNN: one step, input [batch, input]."""

    sequence = False

    def __init__(self, node):
        super().__init__(node, node.options(O.RNNOptions).fused_activation_function, False)


class UnidirectionalSequenceRnn(_RnnBase):
    """UNIDIRECTIONAL_SEQUENCE_RNN: input [batch, time, input] ([time, batch, input] when
    time_major)."""

    def __init__(self, node):
        opts = node.options(O.SequenceRNNOptions)
        super().__init__(node, opts.fused_activation_function, bool(opts.time_major))


BUILTINS.update({B.RNN: Rnn, B.UNIDIRECTIONAL_SEQUENCE_RNN: UnidirectionalSequenceRnn})


class Svdf(BuiltinOp):
    """SVDF: inputs 0 input [batch, input], 1 weights_feature [filters, input], 2 weights_time
    [filters, memory], 3 bias [units] (optional), 4 state (variable, [batch, memory * filters]);
    output [batch, units]. Float32, or int8 input/output with int8 feature weights, int16 time
    weights and state, int32 bias (svdf.cc requires RELU there and does not apply it)."""

    def __init__(self, node):
        super().__init__(node)
        opts = node.options(O.SVDFOptions)
        self.rank = int(opts.rank)
        act = Act(opts.fused_activation_function)
        for k in (0, 1, 2, 4):
            node.require_input(k)
        if any(node.input(k) is not None and node.const_input(k) is None for k in (1, 2, 3)):
            raise node.error("SVDF weights and bias must be constants", unsupported=True)
        self.integer = node.input(0).type == TensorType.INT8
        wf, wt = node.const_input(1), node.const_input(2)
        bias = node.const_input(3) if node.input(3) is not None else None
        self.n_filter, self.n_memory = wt.shape
        if self.rank < 1 or self.n_filter % self.rank:
            raise node.error(f"rank {self.rank} does not divide {self.n_filter} filters")
        self.units = self.n_filter // self.rank
        if self.integer:
            if act != Act.RELU:
                raise node.error("the integer SVDF requires RELU (svdf.cc)")
            self.act = 0
            in_s, self.in_zp = node.quant_in(0)
            out_s, self.out_zp = node.require_quant(node.output(0))
            st_s = node.require_quant(node.input(4))[0]
            self.mult = tfl_rnn.svdf_multipliers(in_s, node.quant_in(1)[0], st_s,
                                                 node.quant_in(2)[0], out_s)
            self.wf, self.wt = wf.astype(np.int8), wt.astype(np.int16)
            self.bias = None if bias is None else bias.astype(np.int32)
        else:
            if node.input(1).type != TensorType.FLOAT32:
                raise node.error("hybrid SVDF (float input, int8 weights) is not supported",
                                 unsupported=True)
            if act not in (Act.NONE, *_ACTS):
                raise node.error(f"SVDF activation {act.name} is not supported",
                                 unsupported=True)
            self.act = _ACTS.get(act, 0)
            self.in_zp = self.out_zp = 0
            self.mult = (0, 0, 0, 0)
            self.wf, self.wt = wf.astype(np.float32), wt.astype(np.float32)
            self.bias = None if bias is None else bias.astype(np.float32)

    def prepare(self, shapes):
        shape = shapes[0]
        if len(shape) != 2 or shape[1] != self.wf.shape[1]:
            raise self.error(f"input shape {shape} does not match weights_feature")
        return [(shape[0], self.units)]

    def _run(self, x, state, out):
        st = state.reshape(x.shape[0], self.n_filter, self.n_memory)
        m1, s1, m2, s2 = self.mult
        tfl_rnn.svdf(x, self.wf, self.wt, self.bias, rank=self.rank, act=self.act, state=st,
                     out=out, in_zp=self.in_zp, m1=m1, s1=s1, m2=m2, s2=s2, out_zp=self.out_zp)

    def eval(self, inputs):
        x = inputs[0]
        out = np.empty((x.shape[0], self.units), x.dtype)
        self._run(x, inputs[4], out)
        return [out]

    def bind(self, inputs, outputs):
        x, state, out = inputs[0], inputs[4], outputs[0]
        if any(a is None or not a.flags.c_contiguous for a in (x, state, out)):
            return None
        return lambda: self._run(x, state, out)


BUILTINS[B.SVDF] = Svdf
