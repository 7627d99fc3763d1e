"""TFLite control flow on the CPU: IF, WHILE and CALL_ONCE run other subgraphs of the model.

LiteRT's kernels (``tensorflow/lite/kernels/{if,while,call_once}.cc``) own no arithmetic: they
copy tensors into a subgraph, invoke it and copy its outputs back. Here a ``SubgraphRunner``
is that invoked subgraph: the CPU builtins of its nodes, run in order over a fresh tensor map.
Its input shapes are the caller's (LiteRT resizes the subgraph inputs to the node's inputs, the
file's shapes do not matter), and every node is prepared again whenever its input shapes
change, so shapes may change from one WHILE iteration to the next, as LiteRT's ``Eval_dynamic``.

Output shapes (the builtins' ``prepare``), as LiteRT's Prepare decides static or dynamic:

* IF: static when both branches give static outputs of equal shapes, else dynamic (None);
* WHILE: static when the body's outputs keep the shapes of its inputs, else dynamic;
* CALL_ONCE: no outputs; its init subgraph runs at the first invoke only.

A dynamic output makes the interpreter run the node's consumers with shapes known at run time,
and keeps the NNAPI delegate off the graph (it takes static-sized graphs only). The delegate
never takes these nodes: IF / WHILE / CALL_ONCE are absent from ``NNAPIDelegateKernel::Validate``
("Unsupported operation type.", kUnsupportedOperator).

Errors: the checks of LiteRT's Prepare (input / output counts, types, a one-element bool
condition, subgraph indices in range and different for WHILE) raise ``BuiltinError`` naming the
node; a subgraph that reaches itself again raises it when the builtin is created.
"""
from __future__ import annotations

import os

import numpy as np

from nnsim.tflite.builtins._base import BuiltinOp, numpy_dtype
from nnsim.tflite.options import CallOnceOptions, IfOptions, WhileOptions
from nnsim.tflite.schema import TensorType

__all__ = ["CallOnce", "If", "SubgraphRunner", "While"]

# Subgraphs whose runners are being built (create_builtin of a nested IF / WHILE builds its
# runners at once): a subgraph met again on the way down would recurse without end.
_BUILDING: list[int] = []


class SubgraphRunner:
    """One subgraph, run on the CPU builtins: ``invoke(arrays) -> arrays``."""

    def __init__(self, model, index: int, caller):
        """``caller``: the control-flow node; its ``create_builtin`` builds the subgraph's
        builtins (the registry, which lists this module's builtins: not imported here)."""
        create_builtin = caller.create_builtin
        if create_builtin is None:
            raise caller.error("a control-flow builtin needs its node from create_builtin "
                               "(the factory of its subgraphs' builtins)")
        if not 0 <= index < len(model.subgraphs):
            raise caller.error(f"subgraph index {index} is out of range (the model has "
                               f"{len(model.subgraphs)} subgraphs)")
        if index in _BUILDING:
            raise caller.error(f"subgraph {index} calls itself (through subgraphs "
                               f"{_BUILDING})")
        self.index = index
        self.sg = sg = model.subgraphs[index]
        self.caller = caller
        _BUILDING.append(index)
        try:
            self.builtins = [create_builtin(model, index, n) for n in range(len(sg.operators))]
        finally:
            _BUILDING.pop()
        self.input_dtypes = [numpy_dtype(sg.tensors[i].type) for i in sg.inputs]
        self.output_dtypes = [numpy_dtype(sg.tensors[o].type) for o in sg.outputs]
        self._constants = {t.index: np.asarray(t.data) for t in sg.tensors if t.data is not None}
        self._prepared = [None] * len(sg.operators)   # input shapes each node was prepared for
        self._prepared_out = [None] * len(sg.operators)

    def _prepare_node(self, n: int, in_shapes: list) -> list:
        if self._prepared[n] != in_shapes:
            out = self.builtins[n].prepare(in_shapes)
            self._prepared[n] = in_shapes
            self._prepared_out[n] = [None if s is None else tuple(int(d) for d in s)
                                     for s in out]
        return self._prepared_out[n]

    def output_shapes(self, input_shapes: list) -> list:
        """The outputs' shapes for these input shapes, None where known only at run time."""
        shapes = {i: tuple(a.shape) for i, a in self._constants.items()}
        shapes.update(zip(self.sg.inputs, (None if s is None else tuple(s)
                                           for s in input_shapes)))
        for n, op in enumerate(self.sg.operators):
            in_shapes = [None if i < 0 else shapes.get(i) for i in op.inputs]
            if any(s is None for i, s in zip(op.inputs, in_shapes) if i >= 0):
                out = [None] * len(op.outputs)
            else:
                out = self._prepare_node(n, in_shapes)
            shapes.update((o, s) for o, s in zip(op.outputs, out) if o >= 0)
        return [shapes.get(o) for o in self.sg.outputs]

    def invoke(self, inputs: list) -> list:
        """Run the subgraph on ``inputs`` (one array per subgraph input); returns copies of
        its outputs (LiteRT copies them out of the subgraph too)."""
        sg = self.sg
        values = dict(self._constants)
        for i, value, want in zip(sg.inputs, inputs, self.input_dtypes):
            if value.dtype != want:
                raise self.caller.error(f"subgraph {self.index} input tensor {i} is "
                                        f"{want.name}, got {value.dtype.name}")
            values[i] = value
        for n, op in enumerate(sg.operators):
            builtin = self.builtins[n]
            arrays = [None if i < 0 else values.get(i) for i in op.inputs]
            for i, a in zip(op.inputs, arrays):
                if a is None and i >= 0:
                    raise builtin.error(f"subgraph {self.index}: input tensor {i} has no value")
            self._prepare_node(n, [None if a is None else tuple(a.shape) for a in arrays])
            results = builtin.eval(arrays)
            if len(results) != len(op.outputs):
                raise builtin.error(f"produced {len(results)} outputs, expected "
                                    f"{len(op.outputs)}")
            for o, r in zip(op.outputs, results):
                if o < 0:
                    continue
                want = numpy_dtype(sg.tensors[o].type)
                if r.dtype != want:
                    raise builtin.error(f"subgraph {self.index}: output tensor {o} came out "
                                        f"{r.dtype.name}, the model says {want.name}")
                values[o] = r
        out = []
        for o in sg.outputs:
            if o not in values:
                raise self.caller.error(f"subgraph {self.index} output tensor {o} has no value")
            out.append(np.array(values[o], copy=True))
        return out


def _check_types(node, what: str, got: list, runner: SubgraphRunner, kind: str) -> None:
    want = runner.input_dtypes if kind == "input" else runner.output_dtypes
    if len(got) != len(want):
        raise node.error(f"{what} subgraph {runner.index} has {len(want)} {kind}s, the node "
                         f"passes {len(got)}")
    for k, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise node.error(f"{what} subgraph {runner.index} {kind} {k} is {w.name}, the "
                             f"node's is {g.name}")


def _check_condition(node, shape, what: str, loop: bool = False) -> None:
    """A condition is one bool: any shape of one element for IF; rank 0 or [1] for WHILE
    (LiteRT's NumElements(cond) == 1 and CheckCondOutput)."""
    shape = tuple(shape)
    if int(np.prod(shape, dtype=np.int64)) != 1 or (loop and len(shape) > 1):
        raise node.error(f"{what} must be a single bool, it has shape {shape}")


def _node_dtypes(node, tensors) -> list:
    return [numpy_dtype(node.tensor(i).type) for i in tensors]


class If(BuiltinOp):
    """IF: input 0 a one-element bool, inputs 1.. go to the then or the else subgraph."""

    def __init__(self, node):
        super().__init__(node)
        opts = node.options(IfOptions)
        op = node.op
        if len(op.inputs) < 1 or op.inputs[0] < 0:
            raise node.error("IF needs the condition as input 0")
        if node.input(0).type != TensorType.BOOL:
            raise node.error(f"the condition is {node.input(0).type.name}, IF takes BOOL")
        self.branches = [SubgraphRunner(node.model, opts.then_subgraph_index, node),
                         SubgraphRunner(node.model, opts.else_subgraph_index, node)]
        ins, outs = _node_dtypes(node, op.inputs[1:]), _node_dtypes(node, op.outputs)
        for what, runner in zip(("then", "else"), self.branches):
            _check_types(node, what, ins, runner, "input")
            _check_types(node, what, outs, runner, "output")

    def prepare(self, shapes):
        _check_condition(self.node, shapes[0], "the IF condition")
        then, other = (b.output_shapes(shapes[1:]) for b in self.branches)
        if any(s is None for s in then) or then != other:
            return [None] * len(then)   # LiteRT: SetTensorToDynamic
        return then

    def eval(self, inputs):
        cond = inputs[0]
        _check_condition(self.node, cond.shape, "the IF condition")
        branch = self.branches[0] if bool(cond.reshape(-1)[0]) else self.branches[1]
        return branch.invoke(inputs[1:])


class While(BuiltinOp):
    """WHILE: loop variables in = out; runs body while cond (one bool) says so."""

    def __init__(self, node):
        super().__init__(node)
        opts = node.options(WhileOptions)
        op = node.op
        if len(op.outputs) != len(op.inputs):
            raise node.error(f"WHILE has {len(op.inputs)} inputs and {len(op.outputs)} "
                             f"outputs; they must be the same loop variables")
        if opts.cond_subgraph_index == opts.body_subgraph_index:
            raise node.error(f"cond and body are the same subgraph "
                             f"{opts.cond_subgraph_index}")
        self.cond = SubgraphRunner(node.model, opts.cond_subgraph_index, node)
        self.body = SubgraphRunner(node.model, opts.body_subgraph_index, node)
        ins = _node_dtypes(node, op.inputs)
        _check_types(node, "cond", ins, self.cond, "input")
        _check_types(node, "cond", [np.dtype(np.bool_)], self.cond, "output")
        _check_types(node, "body", ins, self.body, "input")
        _check_types(node, "body", ins, self.body, "output")
        _check_types(node, "the node's", _node_dtypes(node, op.outputs), self.body, "output")

    def prepare(self, shapes):
        shapes = [tuple(s) for s in shapes]
        cond = self.cond.output_shapes(shapes)[0]
        if cond is not None:
            _check_condition(self.node, cond, "the WHILE condition", loop=True)
        body = self.body.output_shapes(shapes)
        if body != shapes:   # grows or shrinks from iteration to iteration, or data-dependent
            return [None] * len(shapes)
        return shapes

    def eval(self, inputs):
        values = list(inputs)
        limit = max_while_iterations()
        for _ in range(limit + 1):
            flag = self.cond.invoke(values)[0]
            _check_condition(self.node, flag.shape, "the WHILE condition", loop=True)
            if not bool(flag.reshape(-1)[0]):
                return [np.array(v, copy=True) for v in values]
            values = self.body.invoke(values)
        # LiteRT loops forever; a diagnostic tool fed random inputs must not (nnsim's limit)
        raise self.error(f"the loop did not end after {limit} iterations "
                         f"({WHILE_LIMIT_ENV} raises the limit)")


WHILE_LIMIT_ENV = "NNSIM_MAX_WHILE_ITERATIONS"


def max_while_iterations() -> int:
    """nnsim's bound on a TFLite WHILE's iterations: ``$NNSIM_MAX_WHILE_ITERATIONS`` or 10**6."""
    try:
        return max(0, int(os.environ.get(WHILE_LIMIT_ENV, "1000000")))
    except ValueError:
        return 1000000


class CallOnce(BuiltinOp):
    """CALL_ONCE: runs its init subgraph (no inputs, no outputs) at the first invoke only."""

    def __init__(self, node):
        super().__init__(node)
        if node.op.inputs or node.op.outputs:
            raise node.error("CALL_ONCE takes no inputs and gives no outputs")
        opts = node.options(CallOnceOptions)
        self.init = SubgraphRunner(node.model, opts.init_subgraph_index, node)
        if self.init.sg.inputs or self.init.sg.outputs:
            raise node.error(f"init subgraph {self.init.index} must have no inputs and no "
                             f"outputs")
        self.done = False

    def prepare(self, shapes):
        return []

    def eval(self, inputs):
        if not self.done:
            self.init.invoke([])
            self.done = True
        return []
