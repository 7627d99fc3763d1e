"""CPU builtins for TFLite's bidirectional recurrent layers (float32):
BIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_RNN.

LiteRT ``kernels/bidirectional_sequence_lstm.cc`` / ``bidirectional_sequence_rnn.cc``: a forward
cell runs over the sequence from the first step, a backward cell (weights and states of its own)
from the last; each writes its own output, or, with ``merge_outputs``, one output whose last axis
is ``[forward | backward]``. The states are variable tensors, kept from invoke to invoke.

Inputs. LSTM (48): 0 input; 1-17 forward cell (as ``recurrent.py``'s LSTM inputs 1-17: no layer
norm); 18-34 backward cell; 35/36 forward output/cell state, 37/38 backward ones; 39 aux input;
40-43 forward and 44-47 backward aux-input-to-{input, forget, cell, output} weights.
RNN (12): 0 input; 1-4 forward weights, recurrent weights, bias, hidden state; 5-8 backward;
9 aux input; 10/11 forward/backward aux weights.

The aux input (both kernels): with aux weights both cells add ``W_aux aux`` to every gate
(stacking with cross links); without them an aux input is the backward cell's input (stacking
without cross links). We add the aux part by concatenating ``[input | aux]`` and
``[W | W_aux]``, so the float sums are in another order than LiteRT's (agreement to rounding).

LiteRT quirks reproduced (they are the reference's observable behaviour):

* the time-major RNN steps through the aux input with the main input's stride (``batch *
  n_input`` values a step); when the aux width differs the cells read those positions (refused
  when they would lie past the end of the aux tensor, which LiteRT reads anyway);
* the batch-major RNN's backward cell reads the main input even when the aux input should
  replace it (``bidirectional_sequence_rnn.cc`` EvalFloat);
* LiteRT checks the backward LSTM's weights against the forward cell's sizes, so both cells
  have the same ``n_cell`` and ``n_output``.

Refused: the hybrid kernels (int8/uint8 weights: ``UnsupportedOperatorError``), and the
batch-major LSTM with ``merge_outputs`` and batch > 1, where ``lstm_eval.cc`` EvalFloat offsets
each batch row's state by the merged output width and so reads and writes past the state
tensors.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from nnsim.kernels import tfl_lstm, tfl_rnn
from nnsim.tflite import options as O
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.builtins.recurrent import _ACTS
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType

__all__ = ["BUILTINS", "BidirectionalSequenceLstm", "BidirectionalSequenceRnn"]

_F32 = np.float32


def _const_f32(node, k):
    """Constant float32 input k (None when omitted); hybrid weights are refused."""
    t = node.input(k)
    if t is None:
        return None
    if t.type in (TensorType.INT8, TensorType.UINT8):
        raise node.error(f"hybrid {node.op.builtin.name} (float input, quantized weights) is "
                         f"not supported", unsupported=True)
    if t.type != TensorType.FLOAT32:
        raise node.error(f"input {k} has type {t.type.name}, expected FLOAT32")
    data = node.const_input(k)
    if data is None:
        raise node.error(f"input {k} is not a constant", unsupported=True)
    return np.ascontiguousarray(data, _F32)


def _strided(aux, shape, strides):
    """[batch, time, width] view of the flat aux values at ``b*sb + t*st + k`` (elements)."""
    flat = np.ascontiguousarray(aux).reshape(-1)
    it = flat.itemsize
    return as_strided(flat, shape, tuple(s * it for s in strides) + (it,), writeable=False)


class _BidiBase(BuiltinOp):
    """What both layers share: layouts, aux input modes, output views, state carrying.

    Subclasses set ``n_fw``/``n_bw`` (output widths), ``n_input``, ``aux_width`` (0 without aux
    weights), ``states`` (forward and backward state input indices) and ``_cell(d, x, states,
    out)`` running direction ``d`` (0 forward, 1 backward) over ``x`` [batch, time, features].
    """

    n_inputs = 0
    aux_index = 0
    aux_input_stride = False    # time-major aux steps of batch * n_input values (the RNN)

    def __init__(self, node, opts):
        super().__init__(node)
        n_in = len(node.op.inputs)
        if n_in != self.n_inputs:
            raise node.error(f"{node.op.builtin.name} takes {self.n_inputs} inputs, got {n_in}")
        self.merge = bool(opts.merge_outputs)
        self.time_major = bool(opts.time_major)
        want = 1 if self.merge else 2
        if len(node.op.outputs) != want:
            raise node.error(f"{want} outputs expected (merge_outputs={self.merge}), got "
                             f"{len(node.op.outputs)}")
        act = Act(opts.fused_activation_function)
        if act not in (Act.NONE, *_ACTS):
            raise node.error(f"activation {act.name} is not supported", unsupported=True)
        self.act = _ACTS.get(act, 0)
        if node.require_input(0).type != TensorType.FLOAT32:
            raise node.error(f"input type {node.input(0).type.name} is not supported "
                             f"(float32 only)", unsupported=True)
        self.has_aux_input = node.input(self.aux_index) is not None
        self.aux_strides = None

    # -- shapes ----------------------------------------------------------------------------------
    def _layout(self, shape):
        """(batch, time) of a [batch, time, .] or [time, batch, .] shape."""
        return (shape[1], shape[0]) if self.time_major else (shape[0], shape[1])

    def prepare(self, shapes):
        shape = shapes[0]
        if len(shape) != 3 or shape[2] != self.n_input:
            raise self.error(f"input shape {shape} does not match the weights (rank 3, "
                             f"{self.n_input} features)")
        batch, time = self._layout(shape)
        self._check_states(shapes, batch)
        self.aux_strides = None
        aux = shapes[self.aux_index]
        if self.aux_width:
            if aux is None or len(aux) != 3 or tuple(aux[:2]) != tuple(shape[:2]) or \
                    aux[2] != self.aux_width:
                raise self.error(f"aux input shape {aux} does not match the input {shape} "
                                 f"and the aux weights ({self.aux_width} features)")
            a, i = self.aux_width, self.n_input
            if self.time_major:
                strides = (a, batch * (i if self.aux_input_stride else a))
            else:
                strides = (time * a, a)
            last = (batch - 1) * strides[0] + (time - 1) * strides[1] + a - 1
            if last >= batch * time * a:
                raise self.error(f"LiteRT steps through the aux input with the input's stride "
                                 f"({i} features); with {a} aux features it reads past the aux "
                                 f"tensor")
            self.aux_strides = strides
        elif aux is not None and self._bw_reads_aux() and tuple(aux) != tuple(shape):
            raise self.error(f"aux input shape {aux} (the backward cell's input) differs from "
                             f"the input shape {shape}")
        lead = tuple(shape[:2])
        if self.merge:
            return [lead + (self.n_fw + self.n_bw,)]
        return [lead + (self.n_fw,), lead + (self.n_bw,)]

    def _check_states(self, shapes, batch):
        raise NotImplementedError

    def _bw_reads_aux(self):
        """Without aux weights: whether the backward cell reads the aux input."""
        return self.has_aux_input

    # -- running ---------------------------------------------------------------------------------
    def _bt(self, a):
        """[batch, time, .] view of a tensor in the node's layout."""
        return a.transpose(1, 0, 2) if self.time_major else a

    def _run(self, ins, outs):
        x = self._bt(ins[0])
        if self.aux_width:
            batch, time = x.shape[:2]
            aux = _strided(ins[self.aux_index], (batch, time, self.aux_width), self.aux_strides)
            x = np.concatenate([x, aux], axis=2)
            x_bw = x
        elif self.has_aux_input and self._bw_reads_aux():
            x_bw = self._bt(ins[self.aux_index])
        else:
            x_bw = x
        if self.merge:
            full = self._bt(outs[0])
            out_fw, out_bw = full[:, :, :self.n_fw], full[:, :, self.n_fw:]
        else:
            out_fw, out_bw = self._bt(outs[0]), self._bt(outs[1])
        self._cell(0, x, [ins[k] for k in self.states[0]], out_fw)
        self._cell(1, x_bw, [ins[k] for k in self.states[1]], out_bw)

    def eval(self, inputs):
        lead = tuple(inputs[0].shape[:2])
        widths = [self.n_fw + self.n_bw] if self.merge else [self.n_fw, self.n_bw]
        outs = [np.empty(lead + (w,), _F32) for w in widths]
        self._run(inputs, outs)
        return outs

    def bind(self, inputs, outputs):
        used = [0, *self.states[0], *self.states[1]]
        if self.has_aux_input:
            used.append(self.aux_index)
        arrays = [inputs[k] for k in used] + list(outputs)
        if any(a is None or not a.flags.c_contiguous for a in arrays):
            return None
        return lambda: self._run(inputs, outputs)


# -- LSTM ----------------------------------------------------------------------------------------
class _LstmCell:
    """The float32 constants of one direction, packed for ``tfl_lstm.lstm_float``; ``base`` is
    0 (forward) or 17 (backward), ``aux_base`` 40 or 44 (None without aux weights)."""

    def __init__(self, node, base, aux_base, n_input, sizes=None):
        k = (lambda j: base + j)
        w = {j: _const_f32(node, k(j)) for j in range(1, 18)}
        for j in (2, 3, 4, 6, 7, 8, 13, 14, 15):
            if w[j] is None:
                raise node.error(f"input {k(j)} is required")
        self.n_cell = w[4].shape[0]
        if w[8].ndim != 2:
            raise node.error(f"input {k(8)} must be a matrix")
        self.n_output = w[8].shape[1]
        c, o = self.n_cell, self.n_output
        if sizes is not None and sizes != (c, o):
            raise node.error(f"the backward cell has n_cell {c} and n_output {o}; LiteRT checks "
                             f"it against the forward cell's {sizes}")
        self.cifg = w[1] is None
        if (w[5] is None) != self.cifg or (w[12] is None) != self.cifg:
            raise node.error(f"inputs {k(1)}, {k(5)}, {k(12)} (input gate) must be all present "
                             f"or all omitted (CIFG)")
        peep = [w[9], w[10], w[11]]
        self.use_peep = w[10] is not None
        if any((p is not None) != self.use_peep for p in peep[1:]) or \
                (w[9] is not None and not self.use_peep) or \
                (self.use_peep and w[9] is None and not self.cifg):
            raise node.error("peephole weights must be all present or all omitted")
        self.use_proj = w[16] is not None
        if w[17] is not None and not self.use_proj:
            raise node.error(f"projection bias {k(17)} without projection weights")
        if not self.use_proj and o != c:
            raise node.error(f"n_output {o} differs from n_cell {c} without a projection")

        def expect(j, shape):
            if w[j] is not None and w[j].shape != shape:
                raise node.error(f"input {k(j)} has shape {w[j].shape}, expected {shape}")
        for j in (1, 2, 3, 4):
            expect(j, (c, n_input))
        for j in (5, 6, 7, 8):
            expect(j, (c, o))
        for j in (9, 10, 11, 12, 13, 14, 15):
            expect(j, (c,))
        expect(16, (o, c))
        expect(17, (o,))
        wx = [w[j] for j in (1, 2, 3, 4)]
        if aux_base is not None:
            aux = [_const_f32(node, aux_base + g) for g in range(4)]
            if aux[0] is None and not self.cifg:
                raise node.error(f"aux input-to-input weights {aux_base} are required without "
                                 f"CIFG")
            width = aux[1].shape[1]
            for g in range(0 if not self.cifg else 1, 4):
                if aux[g].shape != (c, width):
                    raise node.error(f"aux weights {aux_base + g} have shape {aux[g].shape}, "
                                     f"expected {(c, width)}")
            wx = [None if a is None else np.concatenate([a, b], axis=1)
                  for a, b in zip(wx, (None if self.cifg else aux[0], *aux[1:]))]
            n_input += width
        zeros = np.zeros
        self.wx = _stack(wx, (c, n_input))
        self.wh = _stack([w[j] for j in (5, 6, 7, 8)], (c, o))
        self.peep = _stack(peep, (c,))
        self.bias = _stack([w[j] for j in (12, 13, 14, 15)], (c,))
        self.ln = zeros((4, c), _F32)
        self.proj = w[16] if self.use_proj else zeros((o, c), _F32)
        self.proj_bias = w[17] if w[17] is not None else zeros(o, _F32)


def _stack(arrays, shape):
    out = np.zeros((len(arrays),) + shape, _F32)
    for g, a in enumerate(arrays):
        if a is not None:
            out[g] = a.reshape(shape)
    return out


class BidirectionalSequenceLstm(_BidiBase):
    """BIDIRECTIONAL_SEQUENCE_LSTM (float32; see the module docstring)."""

    n_inputs = 48
    aux_index = 39
    states = ((35, 36), (37, 38))

    def __init__(self, node):
        opts = node.options(O.BidirectionalSequenceLSTMOptions)
        super().__init__(node, opts)
        self.cell_clip, self.proj_clip = float(opts.cell_clip), float(opts.proj_clip)
        if self.cell_clip < 0 or self.proj_clip < 0:
            raise node.error("cell_clip and proj_clip must be >= 0")
        aux_w = [node.input(k) is not None for k in (41, 42, 43, 45, 46, 47)]
        if any(aux_w) and not all(aux_w):
            raise node.error("the aux forget/cell/output weights (41-43, 45-47) must be all "
                             "present or all omitted")
        use_aux = all(aux_w)
        if use_aux and not self.has_aux_input:
            raise node.error("aux weights without an aux input (39)")
        if len(node.require_input(4).shape) != 2:
            raise node.error("input-to-output weights (4) must be a matrix")
        self.n_input = node.input(4).shape[1]
        fw = _LstmCell(node, 0, 40 if use_aux else None, self.n_input)
        bw = _LstmCell(node, 17, 44 if use_aux else None, self.n_input,
                       (fw.n_cell, fw.n_output))
        self.cells = (fw, bw)
        self.aux_width = node.input(41).shape[1] if use_aux else 0
        self.n_fw = self.n_bw = fw.n_output
        for k in (35, 36, 37, 38):
            node.require_input(k)

    def _check_states(self, shapes, batch):
        if self.merge and not self.time_major and batch > 1:
            raise self.error("batch-major merge_outputs with batch > 1: LiteRT's kernel offsets "
                             "each batch row's state by the merged output width and reads and "
                             "writes past the state tensors (lstm_eval.cc EvalFloat)")
        cell = self.cells[0]
        for k, width in zip((35, 36, 37, 38), (cell.n_output, cell.n_cell) * 2):
            if int(np.prod(shapes[k])) != batch * width:
                raise self.error(f"state input {k} has shape {shapes[k]}, expected "
                                 f"{batch * width} values")

    def _cell(self, d, x, states, out):
        cell = self.cells[d]
        batch = x.shape[0]
        h = states[0].reshape(batch, cell.n_output)
        c = states[1].reshape(batch, cell.n_cell)
        tfl_lstm.lstm_float(x, cell.wx, cell.wh, cell.peep, cell.ln, cell.bias, cell.proj,
                            cell.proj_bias, cifg=cell.cifg, use_peep=cell.use_peep,
                            use_ln=False, use_proj=cell.use_proj, act=self.act,
                            cell_clip=self.cell_clip, proj_clip=self.proj_clip,
                            reverse=d == 1, h=h, c=c, out=out)


# -- RNN -----------------------------------------------------------------------------------------
class BidirectionalSequenceRnn(_BidiBase):
    """BIDIRECTIONAL_SEQUENCE_RNN (float32; see the module docstring)."""

    n_inputs = 12
    aux_index = 9
    aux_input_stride = True
    states = ((4,), (8,))

    def __init__(self, node):
        opts = node.options(O.BidirectionalSequenceRNNOptions)
        super().__init__(node, opts)
        for k in (1, 2, 3, 4, 5, 6, 7, 8):
            node.require_input(k)
        if (node.input(10) is None) != (node.input(11) is None):
            raise node.error("the aux weights (10, 11) must be both present or both omitted")
        use_aux = node.input(10) is not None
        if use_aux and not self.has_aux_input:
            raise node.error("aux weights without an aux input (9)")
        self.cells = []
        for base, aux_k in ((1, 10), (5, 11)):
            w, r, bias = (_const_f32(node, base + j) for j in range(3))
            units, n_input = w.shape
            if r.shape != (units, units) or bias.shape != (units,):
                raise node.error(f"weights {base}-{base + 2} have shapes {w.shape}, {r.shape}, "
                                 f"{bias.shape}: not [units, input], [units, units], [units]")
            if self.cells and n_input != self.n_input:
                raise node.error(f"backward weights take {n_input} features, forward ones "
                                 f"{self.n_input}")
            self.n_input = n_input
            if use_aux:
                wa = _const_f32(node, aux_k)
                if wa.ndim != 2 or wa.shape[0] != units:
                    raise node.error(f"aux weights {aux_k} have shape {wa.shape}, expected "
                                     f"[{units}, aux features]")
                self.aux_width = wa.shape[1]
                w = np.ascontiguousarray(np.concatenate([w, wa], axis=1))
            self.cells.append((w, r, bias))
        if use_aux and self.cells[0][0].shape[1] != self.cells[1][0].shape[1]:
            raise node.error("the forward and backward aux weights take different widths")
        if not use_aux:
            self.aux_width = 0
        self.n_fw, self.n_bw = self.cells[0][2].shape[0], self.cells[1][2].shape[0]

    def _bw_reads_aux(self):
        # bidirectional_sequence_rnn.cc: only the time-major loop reads bw_input; the
        # batch-major backward loop reads the main input.
        return self.has_aux_input and self.time_major

    def _check_states(self, shapes, batch):
        for k, units in ((4, self.n_fw), (8, self.n_bw)):
            if tuple(shapes[k]) != (batch, units):
                raise self.error(f"hidden state {k} has shape {shapes[k]}, expected "
                                 f"{(batch, units)}")

    def _cell(self, d, x, states, out):
        w, r, bias = self.cells[d]
        tfl_rnn.rnn_float(x, w, r, bias, act=self.act, reverse=d == 1, h=states[0], out=out)


BUILTINS: dict = {
    B.BIDIRECTIONAL_SEQUENCE_LSTM: BidirectionalSequenceLstm,
    B.BIDIRECTIONAL_SEQUENCE_RNN: BidirectionalSequenceRnn,
}
