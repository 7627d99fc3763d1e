"""``nnsim.tflite.Interpreter``: LiteRT's Python ``Interpreter`` surface on nnsim.

A script written for ``ai_edge_litert.interpreter`` runs unchanged after swapping the import.
The CPU path runs every node with ``nnsim.tflite.builtins`` (TFLite reference-kernel
semantics, whatever ``experimental_op_resolver_type`` says). Delegates given as
``experimental_delegates`` are applied in ``allocate_tensors()`` (LiteRT's
``ModifyGraphWithDelegate``): the delegate's plan replaces the node list; when applying it
fails the original plan is restored and the failure logged, as TFLite does. After
``resize_tensor_input`` the next ``allocate_tensors()`` prepares again, delegation included.

Beyond LiteRT, for the CLI and for op profiling:

* ``delegation``: the ``DelegationResult`` in effect (None when nothing is delegated), and
  ``delegation_error``: why applying a delegate failed (None when it did not);
* ``execution_plan`` / ``plan_items()``: what runs, in order, and which nodes each item covers;
* ``last_profile``: host nanoseconds per plan item of the last ``invoke()``;
* ``last_delegate_executions``: the NNAPI executions of the last ``invoke()`` (their
  ``step_report`` and ``timing``).

Errors: a missing or corrupt file raises the reader's ``ModelFileError``; a wrong dtype or
shape in ``set_tensor`` raises ValueError worded like LiteRT's; a node without a CPU kernel
raises ``UnsupportedOperatorError`` (naming node and operator) from ``allocate_tensors()``.
"""
from __future__ import annotations

import dataclasses
import enum
import logging
import time
from dataclasses import dataclass
from functools import partial

import numpy as np

from nnsim.kernels import threads as kernel_threads
from nnsim.kernels._common import aligned_copy, aligned_empty, aligned_zeros
from nnsim.kernels.program import Program
from nnsim.limits import TensorTooLargeError, check_bytes, max_tensor_bytes, shape_bytes
from nnsim.tflite import tflog
from nnsim.tflite.builtins import UnsupportedOperatorError, create_builtin
from nnsim.tflite.arena import share_buffers
from nnsim.tflite.builtins._base import numpy_dtype
from nnsim.tflite.delegate import DELEGATE_NAME, DelegateError
from nnsim.tflite.placement import placements
from nnsim.tflite.reader import read_model
from nnsim.tflite.schema import NUMPY_DTYPES, TensorType
from nnsim.tflite.sparsity import sparsity_details
from nnsim.tflite.warm_up import spare_compiles, warm_up

__all__ = ["Interpreter", "OpResolverType", "SignatureRunner", "PlanItem", "PlanItemProfile"]

_TYPE_NAMES = {np.dtype(dt).newbyteorder("="): tt.name for tt, dt in NUMPY_DTYPES.items()}
DELEGATE_OP_NAME = "DELEGATE"


class OpResolverType(enum.Enum):
    """LiteRT's op resolver choices. nnsim always runs TFLite's reference-kernel semantics."""

    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


@dataclass(frozen=True)
class PlanItem:
    """One entry of the execution plan: a CPU node or a delegate kernel (with its nodes)."""

    kind: str            # "node" or "delegate"
    index: int           # node index, or the delegate kernel's index in ``delegation.kernels``
    op_name: str         # the TFLite op name, or the delegate's name (TfLiteNnapiDelegate)
    nodes: tuple         # the TFLite nodes this item runs
    node_index: int      # TFLite node index (a delegate node is numbered after the originals)


@dataclass(frozen=True)
class PlanItemProfile:
    item: PlanItem
    host_ns: int


_RESTORED = "Restored original execution plan after delegate application failure."


class _LineCatcher(logging.Handler):
    """Notes whether a given log message went by (the delegate may log it itself)."""

    def __init__(self, message):
        super().__init__(level=1)
        self.message, self.hit = message, False

    def emit(self, record):
        if record.getMessage() == self.message:
            self.hit = True


def _reset_variable(tensor, value) -> None:
    """``tflite::ResetVariableTensor``: zero, or the zero point for an int8 tensor."""
    q = tensor.quantization
    int8 = tensor.type == TensorType.INT8 and q is not None and q.zero_points.size
    value.fill(int(q.zero_points[0]) if int8 else 0)


def _type_name(dtype) -> str:
    return _TYPE_NAMES.get(np.dtype(dtype).newbyteorder("="), np.dtype(dtype).name.upper())


def _resolver_ok(value) -> bool:
    name = getattr(value, "name", None)
    return name in OpResolverType.__members__


class Interpreter:
    """LiteRT-compatible interpreter (``ai_edge_litert.interpreter.Interpreter``)."""

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None,
                 num_threads=None, experimental_op_resolver_type=OpResolverType.AUTO,
                 experimental_preserve_all_tensors=False, **_experimental):
        if not _resolver_ok(experimental_op_resolver_type):
            raise ValueError(f"Unrecognized passed in op resolver type: "
                             f"{experimental_op_resolver_type}")
        if num_threads is not None:
            if not isinstance(num_threads, int):
                raise ValueError("type of num_threads should be int")
            if num_threads < 1:
                raise ValueError("num_threads should >= 1")
        if model_path and not model_content:
            self._model = read_model(model_path)
        elif model_content and not model_path:
            self._model = read_model(model_content)
        elif not model_content and not model_path:
            raise ValueError("`model_path` or `model_content` must be specified.")
        else:
            raise ValueError("Can't both provide `model_path` and `model_content`")
        tflog.log(logging.INFO, "Initialized TensorFlow Lite runtime.", once=True)
        # None (LiteRT: 1): the kernels run with the thread count of the calling context
        # (nnsim.kernels.threads, 1 unless set)
        self.num_threads = self._threads = num_threads
        self._preserve_all, self._arena = bool(experimental_preserve_all_tensors), None
        # nnsim: False leaves the CPU kernels' plans (packed filters, buffers) to the first
        # invoke, for tools that only need shapes and placements (nnsim graph)
        self.prepare_kernels = True
        self._delegates = list(experimental_delegates or [])
        for d in self._delegates:
            if not callable(getattr(d, "prepare", None)):
                raise ValueError(f"experimental_delegates: {type(d).__name__} is not an nnsim "
                                 f"delegate (use nnsim.tflite.load_delegate('nnapi', ...))")
        self._sg = self._model.subgraphs[0]
        self._input_shapes: dict[int, tuple] = {}
        self._allocated = False
        self._values: dict[int, np.ndarray] = {}
        self._shapes: list = [tuple(t.shape) for t in self._sg.tensors]
        self._builtins: dict = {}
        self._builtin_cache: dict = {}
        self._dynamic: set = set()
        self.delegation = None
        self.delegation_error = None
        self._delegated_shapes = None
        self.execution_plan: list = [("node", i) for i in range(len(self._sg.operators))]
        self._steps, self._steps_plan = [], None
        self._bound = None
        self._profile, self._profile_stamps = [], []
        self.last_delegate_executions: list = []
        self._signature_defs = self.get_signature_list()
        if self._delegates:
            self._modify_graph_with_delegates()

    def _modify_graph_with_delegates(self) -> None:
        """LiteRT applies ``experimental_delegates`` in the constructor and raises when one
        fails (ModifyGraphWithDelegate's error, after the ERROR lines on stderr); nnsim does
        the same (the delegate's Prepare needs the node shapes: one allocation here)."""
        self.allocate_tensors()
        if self.delegation_error is not None:
            raise RuntimeError(f"{self.delegation_error}\n{_RESTORED}")
    # -- model ----------------------------------------------------------------------------
    @property
    def model(self):
        """The ``TfliteModel`` (nnsim.tflite.reader) this interpreter runs."""
        return self._model

    def num_subgraphs(self) -> int:
        return len(self._model.subgraphs)

    # -- allocation -----------------------------------------------------------------------
    def modify_graph_with_delegate(self, delegate) -> None:
        """``Interpreter::ModifyGraphWithDelegate`` for a delegate created after the
        interpreter (benchmark_model's order); it is applied at the next allocate_tensors."""
        self._delegates.append(delegate)
        self._delegated_shapes = None
        self._allocated = False

    def allocate_tensors(self):
        """Prepare every node for the current input shapes and apply the delegates."""
        shapes, prepared = self._infer_shapes()
        self._shapes = shapes
        dynamic = {i for i, s in enumerate(shapes) if s is None}
        if self._delegates and self._delegated_shapes != shapes:
            self._apply_delegates(shapes, dynamic)
        self._builtins = {}
        self._dynamic = set()
        for kind, index in self.execution_plan:
            if kind != "node":
                continue
            entry = prepared[index]
            if isinstance(entry, UnsupportedOperatorError):
                raise entry
            builtin, ok = entry
            self._builtins[index] = builtin
            if not ok:
                self._dynamic.add(index)
            elif self.prepare_kernels and hasattr(builtin, "_ensure_plan"):
                # TFLite's Prepare: the CPU kernel's plan (packed filter, buffers) now
                builtin._ensure_plan(self._shapes[self._sg.operators[index].inputs[0]])
        self._steps_plan = None   # invoke resolves the plan again
        self._bound = None
        self._values = {}
        for t in self._sg.tensors:
            if t.data is not None:
                self._values[t.index] = np.asarray(t.data)
        for i in self._sg.inputs:
            t = self._sg.tensors[i]
            if t.data is None:   # aligned as TFLite's arena (the kernels' vector loads)
                self._values[i] = aligned_zeros(self._shape_or_file(i), numpy_dtype(t.type))
        # Variable tensors (the LSTM/RNN/SVDF states) start as AllocateTensors'
        # ResetVariableTensors leaves them; their builtins update them in place.
        for t in self._sg.tensors:
            if t.is_variable and t.data is None:
                self._values[t.index] = np.zeros(self._shape_or_file(t.index),
                                                 numpy_dtype(t.type))
                _reset_variable(t, self._values[t.index])
        self._allocated = True

    def _shape_or_file(self, i):
        s = self._shapes[i]
        return tuple(self._sg.tensors[i].shape) if s is None else tuple(s)

    def _infer_shapes(self):
        """TFLite's Prepare pass: output shapes of every node, in node order."""
        sg = self._sg
        shapes = [tuple(t.shape) for t in sg.tensors]
        for i, s in self._input_shapes.items():
            shapes[i] = s
        prepared = {}
        limit = max_tensor_bytes()
        for i in sg.inputs:   # sizes are checked before anything of that size is allocated
            self._check_size(i, shapes[i], limit)
        for n, op in enumerate(sg.operators):
            builtin = self._builtin(n)
            if isinstance(builtin, UnsupportedOperatorError):
                prepared[n] = builtin
                continue  # keep the file's shapes; fatal only if the node stays on the CPU
            in_shapes = [None if i < 0 else shapes[i] for i in op.inputs]
            if any(s is None for i, s in zip(op.inputs, in_shapes) if i >= 0):
                out_shapes = [None] * len(op.outputs)
            else:
                try:
                    out_shapes = builtin.prepare(in_shapes)
                except MemoryError as e:   # a kernel buffer numpy could not reserve
                    if isinstance(e, TensorTooLargeError):
                        raise builtin.error(str(e)) from None
                    raise builtin.error(f"out of memory preparing the kernel: {e}") from None
            for o, s in zip(op.outputs, out_shapes):
                if o >= 0:
                    shapes[o] = None if s is None else tuple(int(d) for d in s)
                    self._check_size(o, shapes[o], limit)
            prepared[n] = (builtin, all(s is not None for s in out_shapes))
        total = sum(self._tensor_bytes(t.index, shapes[t.index]) for t in sg.tensors
                    if t.data is None and shapes[t.index] is not None)
        check_bytes("the model's non-constant tensors together", total, limit)
        return shapes, prepared

    def _tensor_bytes(self, i, shape) -> int:
        try:
            dtype = numpy_dtype(self._sg.tensors[i].type)
        except TypeError:   # strings, resources: no dense buffer
            return 0
        return shape_bytes(shape, dtype)

    def _check_size(self, i, shape, limit) -> None:
        """TensorTooLargeError naming the tensor when its buffer would exceed the limit."""
        if shape is not None and self._sg.tensors[i].data is None:
            t = self._sg.tensors[i]
            check_bytes(f"tensor {i} '{t.name}' {list(shape)} {t.type.name}",
                        self._tensor_bytes(i, shape), limit)

    def _builtin(self, n):
        """The node's builtin (created once: constants are packed once), or the error."""
        if n not in self._builtin_cache:
            try:
                self._builtin_cache[n] = create_builtin(self._model, 0, n)
            except UnsupportedOperatorError as e:
                self._builtin_cache[n] = e
        return self._builtin_cache[n]

    def _model_with_shapes(self, shapes):
        """The model with the current tensor shapes (what the delegate sees after a resize)."""
        sg = self._sg
        if all(tuple(t.shape) == tuple(s) for t, s in zip(sg.tensors, shapes)):
            return self._model
        tensors = tuple(t if tuple(t.shape) == tuple(s) else dataclasses.replace(t, shape=tuple(s))
                        for t, s in zip(sg.tensors, shapes))
        new_sg = dataclasses.replace(sg, tensors=tensors)
        return dataclasses.replace(self._model, subgraphs=(new_sg,) + self._model.subgraphs[1:])

    def _apply_delegates(self, shapes, dynamic):
        self.delegation = None
        self.delegation_error = None
        self.execution_plan = [("node", i) for i in range(len(self._sg.operators))]
        self._delegated_shapes = shapes
        if dynamic:
            t = min(dynamic)
            tflog.log(logging.WARNING, "Attempting to use a delegate that only supports "
                      "static-sized tensors with a graph that has dynamic-sized tensors "
                      f"(tensor#{t} is a dynamic-sized tensor).")
            return
        model = self._model_with_shapes(shapes)
        for k, delegate in enumerate(self._delegates):
            if self.delegation is not None:
                tflog.log(logging.WARNING, f"nnsim applies one delegate per graph: delegate "
                                           f"{k} ({type(delegate).__name__}) is not applied.")
                continue
            seen = _LineCatcher(_RESTORED)
            tflog.LOGGER.addHandler(seen)
            try:
                result = delegate.prepare(model, 0)
            except DelegateError as e:
                self.delegation_error = str(e)
                if not seen.hit:  # subgraph.cc logs it once, whichever path failed
                    tflog.log(logging.ERROR, _RESTORED)
                continue
            finally:
                tflog.LOGGER.removeHandler(seen)
            if result is not None and result.kernels:
                self.delegation = result
                self.execution_plan = list(result.plan)

    # -- tensors --------------------------------------------------------------------------
    def _check_index(self, tensor_index, subgraph_index=0):
        if int(subgraph_index) != 0:
            if not 0 <= int(subgraph_index) < self.num_subgraphs():
                raise ValueError(f"subgraph_index is out of range: {subgraph_index} for the "
                                 f"model, which has {self.num_subgraphs()} subgraphs.")
            raise ValueError("nnsim runs subgraph 0 only")
        n = len(self._sg.tensors)
        i = int(tensor_index)
        if not 0 <= i < n:
            raise ValueError(f"Invalid tensor index {i} exceeds max tensor index {n}")
        return i

    def _get_tensor_details(self, tensor_index, subgraph_index=0):
        i = self._check_index(tensor_index, subgraph_index)
        t = self._sg.tensors[i]
        try:
            dtype = numpy_dtype(t.type).type
        except TypeError:
            raise ValueError("Could not get tensor details") from None
        shape = np.array(self._shape_or_file(i), dtype=np.int32)
        sig = t.shape_signature
        q = t.quantization
        if q is None or q.scales.size == 0:
            scales, zps, qdim = np.zeros(0, np.float32), np.zeros(0, np.int32), 0
        else:
            scales = np.array(q.scales, np.float32)
            zps = np.array(q.zero_points, np.int32)
            qdim = int(q.quantized_dimension)
        legacy = (float(scales[0]), int(zps[0])) if scales.size == 1 else (0.0, 0)
        return {
            "name": t.name,
            "index": i,
            "shape": shape,
            "shape_signature": np.array(sig, np.int32) if sig else shape.copy(),
            "dtype": dtype,
            "quantization": legacy,
            "quantization_parameters": {"scales": scales, "zero_points": zps,
                                        "quantized_dimension": qdim, "block_size": 0},
            "sparsity_parameters": sparsity_details(t.sparsity),
        }

    def get_tensor_details(self, subgraph_index=0):
        if not 0 <= int(subgraph_index) < self.num_subgraphs():
            raise ValueError(f"subgraph_index is out of range: {subgraph_index} for the model, "
                             f"which has {self.num_subgraphs()} subgraphs.")
        details = []
        for i in range(len(self._model.subgraphs[subgraph_index].tensors)):
            try:
                details.append(self._get_tensor_details(i, subgraph_index))
            except ValueError:
                pass
        return details

    def get_input_details(self):
        return [self._get_tensor_details(i) for i in self._sg.inputs]

    def get_output_details(self):
        return [self._get_tensor_details(i) for i in self._sg.outputs]

    def set_tensor(self, tensor_index, value):
        """Copy ``value`` into a tensor (dtype and shape must match exactly, as in LiteRT)."""
        i = self._check_index(tensor_index)
        t = self._sg.tensors[i]
        if t.data is not None:
            raise ValueError(f"Cannot set tensor: tensor {i} '{t.name}' is a constant")
        value = np.asarray(value)
        expected = numpy_dtype(t.type)
        if value.dtype.newbyteorder("=") != expected:
            raise ValueError(f"Cannot set tensor: Got value of type {_type_name(value.dtype)} "
                             f"but expected type {t.type.name} for input {i}, name: {t.name} ")
        shape = self._shape_or_file(i)
        if value.ndim != len(shape):
            raise ValueError(f"Cannot set tensor: Dimension mismatch. Got {value.ndim} but "
                             f"expected {len(shape)} for input {i}.")
        for d, (got, want) in enumerate(zip(value.shape, shape)):
            if got != want:
                raise ValueError(f"Cannot set tensor: Dimension mismatch. Got {got} but "
                                 f"expected {want} for dimension {d} of input {i}.")
        if not self._allocated:
            raise ValueError("Cannot set tensor: Tensor is unallocated. Try calling "
                             "allocate_tensors() first")
        buf = self._values.get(i)
        if buf is None or not buf.flags.writeable or buf.shape != shape:
            buf = self._values[i] = aligned_empty(shape, expected)
            np.copyto(buf, value)
        else:
            np.copyto(buf, value)

    def get_tensor(self, tensor_index, subgraph_index=0):
        """A copy of a tensor's current value."""
        i = self._check_index(tensor_index, subgraph_index)
        t = self._sg.tensors[i]
        if t.data is not None:
            return np.array(t.data, copy=True)
        if not self._allocated:
            raise ValueError("Tensor data is null. Run allocate_tensors() first")
        value = self._values.get(i)
        if value is None:
            return np.zeros(self._shape_or_file(i), numpy_dtype(t.type))
        return np.array(value, copy=True)

    def tensor(self, tensor_index):
        """A function returning a numpy view of the tensor's current buffer (no copy)."""
        i = self._check_index(tensor_index)

        def view():
            if not self._allocated and self._sg.tensors[i].data is None:
                raise ValueError("Tensor data is null. Run allocate_tensors() first")
            value = self._values.get(i)
            if value is None:
                t = self._sg.tensors[i]
                value = self._values[i] = np.zeros(self._shape_or_file(i), numpy_dtype(t.type))
            return value
        return view

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        """Resize a graph input; the next ``allocate_tensors()`` prepares again."""
        i = self._check_index(input_index)
        t = self._sg.tensors[i]
        size = tuple(int(d) for d in np.array(tensor_size, dtype=np.int32).reshape(-1))
        if t.data is not None or i not in self._sg.inputs:
            raise RuntimeError("Attempting to resize a fixed-size tensor.")
        if any(d < 0 for d in size):
            raise ValueError(f"Cannot resize tensor {i} to {size}: negative dimension")
        current = self._shape_or_file(i)
        if strict:
            sig = t.shape_signature or tuple(t.shape)
            if len(sig) != len(size):
                raise RuntimeError(f"Attempting to resize tensor {i} to rank {len(size)}. "
                                   f"ResizeInputTensorStrict only allows mutating unknown "
                                   f"dimensions identified by -1.")
            for d, (old, new) in enumerate(zip(sig, size)):
                if old != -1 and old != new:
                    raise RuntimeError(f"Attempting to resize dimension {d} of tensor {i} with "
                                       f"value {old} to {new}. ResizeInputTensorStrict only "
                                       f"allows mutating unknown dimensions identified by -1.")
        if size == current:
            return
        self._input_shapes[i] = size
        self._shapes[i] = size
        self._allocated = False

    # -- running --------------------------------------------------------------------------
    def invoke(self):
        """Run the execution plan once, the kernels (CPU nodes and delegated NNAPI executions)
        on ``num_threads`` threads."""
        if not self._allocated:
            raise RuntimeError("Invoke called on model that is not ready.")
        if self._threads is None:
            return self._invoke()
        token = kernel_threads.set_num_threads(self._threads)
        try:
            return self._invoke()
        finally:
            kernel_threads.reset_num_threads(token)

    def _invoke(self):
        values = self._values
        steps = self._steps if self._steps_plan is self.execution_plan else self._build_steps()
        clock = time.perf_counter_ns
        bound = self._bound
        if bound and bound[0] is steps and all(values.get(i) is a for i, a in bound[1]):
            bound[2].run()   # clock readings around the steps (last_profile: differences)
            self._profile_stamps, self._profile = bound[2].stamps, None
            self.last_delegate_executions = []
            return
        stamps, executions = [clock()], []
        for item, builtin, inputs, outputs, dtypes, dynamic in steps:
            if builtin is not None:
                self._run_node(builtin, inputs, outputs, dtypes, dynamic, values)
            else:
                kernel = self.delegation.kernels[item.index]
                kernel.invoke(values)
                if kernel.last_execution is not None:
                    executions.append(kernel.last_execution)
                for o in kernel.output_tensors:
                    self._shapes[o] = values[o].shape   # (tflite_outputs: ndarrays)
            stamps.append(clock())
        self._profile_stamps, self._profile = stamps, None
        self.last_delegate_executions = executions
        if self._bound is None:   # False: this plan cannot be bound (delegate, dynamic shapes)
            self._bound = self._bind(steps) if self.delegation is None else False
        elif self._bound is not False:   # an input buffer was replaced: bind again
            self._bound = self._bind(steps) or False

    def _bind(self, steps):
        """After an invoke: each step as a function of no arguments over fixed buffers (as
        TFLite's arena: a tensor keeps its buffer from invoke to invoke), so that the next
        invokes run the kernels without looking anything up. A builtin binds itself
        (``BuiltinOp.bind``) when its inputs are fixed; otherwise its node is run as usual and
        its outputs are copied into buffers of their own, which makes them fixed too. Returns
        (steps, graph input buffers the binding relies on, calls); invoke checks the input
        buffers are still the same objects."""
        values = self._values
        fixed = {t.index for t in self._sg.tensors if t.data is not None or t.is_variable}
        if not self._preserve_all:   # intermediate tensors share one arena, as TFLite's
            self._arena = share_buffers(steps, values, fixed | {*self._sg.inputs,
                                                                *self._sg.outputs})
        inputs = [(i, values.get(i)) for i in self._sg.inputs if i not in fixed]
        fixed.update(i for i, _ in inputs)
        calls, replaced = [], set()
        for item, builtin, ins, outs, dtypes, dynamic in steps:
            if builtin is None or dynamic:
                return False
            if replaced.intersection(ins):   # refresh outputs computed from replaced inputs
                self._run_node(builtin, ins, outs, dtypes, False, values)
            arrays = [None if i < 0 else values.get(i) for i in ins]
            results = [None if o < 0 else values.get(o) for o in outs]
            call = None
            if all(i < 0 or i in fixed for i in ins):
                call = builtin.bind(arrays, results)   # its cores compiled by the first invoke
            if call is None:
                pinned = [None if r is None else aligned_copy(r, own=True) for r in results]
                call = partial(self._run_pinned, builtin, ins, outs, dtypes, pinned)
                for o, r in zip(outs, pinned):
                    if o >= 0:
                        values[o] = r
                        replaced.add(o)
            fixed.update(o for o in outs if o >= 0)
            calls.append(call)
        return steps, inputs, Program(calls)

    def _run_pinned(self, builtin, ins, outs, dtypes, pinned):
        """A step that cannot bind itself: run its node, then copy its outputs into the
        step's own buffers (consumers are bound to those)."""
        values = self._values
        self._run_node(builtin, ins, outs, dtypes, False, values)
        for o, buffer in zip(outs, pinned):
            if o >= 0:
                result = values[o]
                if result is not buffer:
                    np.copyto(buffer, result)
                    values[o] = buffer

    @property
    def last_profile(self) -> list:
        """Host nanoseconds per plan item of the last ``invoke()`` (PlanItemProfile list)."""
        if self._profile is None:
            items = [step[0] for step in self._steps]
            stamps = [int(s) for s in self._profile_stamps]
            self._profile = [PlanItemProfile(i, b - a)   # clock readings around each step
                             for i, a, b in zip(items, stamps, stamps[1:])]
        return self._profile

    @last_profile.setter
    def last_profile(self, value):
        self._profile, self._profile_stamps = list(value), []

    def _build_steps(self):
        """What invoke runs, resolved once per execution plan (TFLite keeps the node's
        registration, tensor indices and types in the plan; nothing is looked up per Eval)."""
        steps = []
        for item in self.plan_items():
            if item.kind != "node":
                steps.append((item, None, (), (), (), False))
                continue
            op = self._sg.operators[item.index]
            dtypes = tuple(None if o < 0 else numpy_dtype(self._sg.tensors[o].type)
                           for o in op.outputs)
            steps.append((item, self._builtins[item.index], tuple(op.inputs), tuple(op.outputs),
                          dtypes, item.index in self._dynamic))
        self._steps, self._steps_plan = steps, self.execution_plan
        return steps

    def _warm_up(self) -> int:
        """The compiling child's work (:func:`nnsim.tflite.warm_up.warm_up`)."""
        return warm_up(self)

    def _spare_compiles(self):
        """The first invoke's spare work beside the compiling child
        (:func:`nnsim.tflite.warm_up.spare_compiles`)."""
        return spare_compiles(self)

    def _run_node(self, builtin, op_inputs, op_outputs, dtypes, dynamic, values):
        inputs = [None if i < 0 else values.get(i) for i in op_inputs]
        for i, v in zip(op_inputs, inputs):
            if v is None and i >= 0:
                raise builtin.error(f"input tensor {i} has no value")
        if dynamic:
            builtin.prepare([None if v is None else tuple(v.shape) for v in inputs])
        outputs = builtin.eval(inputs)
        if len(outputs) != len(op_outputs):
            raise builtin.error(f"produced {len(outputs)} outputs, expected {len(op_outputs)}")
        for o, value, want in zip(op_outputs, outputs, dtypes):
            if o < 0:
                continue
            if value.dtype != want:
                raise builtin.error(f"output tensor {o} came out {value.dtype.name}, the model "
                                    f"says {want.name}")
            values[o] = value
            if dynamic:
                self._shapes[o] = tuple(value.shape)

    # -- plan introspection ---------------------------------------------------------------
    def plan_items(self) -> list[PlanItem]:
        """The execution plan with names and the TFLite nodes each item runs."""
        items = []
        for kind, index in self.execution_plan:
            if kind == "node":
                items.append(PlanItem("node", index, self._sg.operators[index].name, (index,),
                                      index))
            else:
                kernel = self.delegation.kernels[index]
                items.append(PlanItem("delegate", index, getattr(kernel, "name", DELEGATE_NAME),
                                      tuple(kernel.nodes),
                                      kernel.node_index))
        return items

    def node_placement(self) -> dict:
        """TFLite node index -> where it runs: ``"cpu"`` for TFLite's CPU kernels, else the
        NNAPI device the runtime chose for the node's NNAPI operations (``"vsi-npu"``,
        ``"nnapi-reference"``; ``"nnapi-reference+vsi-npu"`` when the delegate lowered the
        node into operations that landed on two devices)."""
        return {p.node: "cpu" if p.partition is None else p.where
                for p in placements(self._model, self.delegation)}

    def _get_op_details(self, op_index):
        n_ops = len(self._sg.operators)
        if op_index < n_ops:
            op = self._sg.operators[op_index]
            name, inputs, outputs = op.name, op.inputs, op.outputs
        else:
            kernels = self.delegation.kernels if self.delegation else []
            kernel = next(k for k in kernels if k.node_index == op_index)
            name, inputs, outputs = DELEGATE_OP_NAME, kernel.input_tensors, kernel.output_tensors

        def types(indices):
            return [numpy_dtype(self._sg.tensors[i].type).type for i in indices if i != -1]
        return {"index": int(op_index), "op_name": name,
                "inputs": np.array(inputs, dtype=np.int32),
                "outputs": np.array(outputs, dtype=np.int32),
                "operand_types": types(inputs), "result_types": types(outputs)}

    def _get_ops_details(self):
        count = len(self._sg.operators) + (len(self.delegation.kernels) if self.delegation else 0)
        return [self._get_op_details(i) for i in range(count)]

    # -- signatures -----------------------------------------------------------------------
    def _get_full_signature_list(self):
        return {s.key: {"inputs": dict(sorted(s.inputs.items())),
                        "outputs": dict(sorted(s.outputs.items()))}
                for s in sorted(self._model.signatures, key=lambda s: s.key)}

    def get_signature_list(self):
        return {key: {"inputs": list(v["inputs"]), "outputs": list(v["outputs"])}
                for key, v in self._get_full_signature_list().items()}

    def get_signature_runner(self, signature_key=None):
        if signature_key is None:
            if len(self._signature_defs) != 1:
                raise ValueError(
                    f"SignatureDef signature_key is None and model has "
                    f"{len(self._signature_defs)} Signatures. None is only allowed when the "
                    f"model has 1 SignatureDef")
            signature_key = next(iter(self._signature_defs))
        return SignatureRunner(interpreter=self, signature_key=signature_key)

    def reset_all_variables(self):
        """Set every variable tensor (recurrent states) back to zero, in place."""
        for t in self._sg.tensors:
            value = self._values.get(t.index)
            if t.is_variable and value is not None:
                _reset_variable(t, value)

    def __repr__(self):
        return (f"<nnsim.tflite.Interpreter {self._model.path!r}: "
                f"{len(self._sg.operators)} nodes, "
                f"{'delegated' if self.delegation else 'CPU only'}>")


class SignatureRunner:
    """LiteRT's ``SignatureRunner``: call with the signature's input names as keywords."""

    def __init__(self, interpreter=None, signature_key=None):
        if not interpreter:
            raise ValueError("None interpreter provided.")
        if not signature_key:
            raise ValueError("None signature_key provided.")
        self._interpreter = interpreter
        self._signature_key = signature_key
        defs = interpreter._get_full_signature_list()
        if signature_key not in defs:
            raise ValueError(f'Invalid signature_key provided: "{signature_key}".')
        sig = next(s for s in interpreter.model.signatures if s.key == signature_key)
        if sig.subgraph_index != 0:
            raise ValueError(f"signature {signature_key!r} runs subgraph {sig.subgraph_index}; "
                             f"nnsim runs subgraph 0 only")
        self._inputs = defs[signature_key]["inputs"]
        self._outputs = defs[signature_key]["outputs"]

    def __call__(self, **kwargs):
        if len(kwargs) != len(self._inputs):
            raise ValueError(
                "Invalid number of inputs provided for running a SignatureDef, "
                f"expected {len(self._inputs)} vs provided {len(kwargs)}")
        ip = self._interpreter
        for name, value in kwargs.items():
            if name not in self._inputs:
                raise ValueError(f"Invalid Input name ({name}) for SignatureDef")
            ip.resize_tensor_input(self._inputs[name], np.array(np.shape(value), np.int32))
        ip.allocate_tensors()
        for name, value in kwargs.items():
            ip.set_tensor(self._inputs[name], value)
        ip.invoke()
        return {name: ip.get_tensor(index) for name, index in self._outputs.items()}

    def get_input_details(self):
        return {name: self._interpreter._get_tensor_details(i)
                for name, i in self._inputs.items()}

    def get_output_details(self):
        return {name: self._interpreter._get_tensor_details(i)
                for name, i in self._outputs.items()}
