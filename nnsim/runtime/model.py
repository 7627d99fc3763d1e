"""ModelBuilder: ``ANeuralNetworksModel`` (runtime/ModelBuilder.cpp).

Every per-call check returns the upstream result code (nnapi-runtime.md 1.5) by raising the
matching :mod:`nnsim.errors` class. ``finish()`` runs in upstream order: large-value pool, LIFO
run-order sort (1.6), full validation, version check, GraphDump under ``debug.nn.vlog model``,
removal of trailing default arguments.
"""
from __future__ import annotations

import numpy as np

from nnsim.errors import BadDataError, BadStateError, NnapiError, UnexpectedNullError
from nnsim.ops.base import ValidationContext
from nnsim.ops.registry import lookup
from nnsim.platform import vlog
from nnsim.runtime.default_args import trailing_arguments_to_remove
from nnsim.runtime.graphdump import graph_dump
from nnsim.platform.properties import RUNTIME_FEATURE_LEVEL, runtime_feature_level  # noqa: F401
from nnsim.common.operand import (Operand, Operation, OperandTypeSpec,
                                   SymmPerChannelQuantParams)
from nnsim.common.validation import (operand_type_feature_level, validate_operand_finish,
                                      validate_operand_type)
from nnsim.types import (FL1, MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES, OperandLifeTime,
                         OperandType, OperationCode, operation_introduced_in)

L = OperandLifeTime
TAG = "ModelBuilder"


class ModelBuilder:
    """A model under construction, then a finished, immutable model."""

    def __init__(self):
        self.operands: list[Operand] = []
        self.operations: list[Operation] = []
        self.input_indexes: list[int] = []
        self.output_indexes: list[int] = []
        self.relax_float32_to_float16 = False
        self.finished = False
        self.invalid = False
        # sorted operation index -> index in the order operations were added
        self.sorted_to_original: list[int] = []
        self.feature_level = FL1
        # operations as compiled/partitioned (trailing default arguments removed)
        self.compiled_inputs: list[tuple] = []
        # The feature level this model may need at most (finish refuses a newer model): the
        # phone's runtime level, or FL8 for the private one-node models of the TFLite CPU path.
        self.runtime_feature_level = runtime_feature_level()

    @classmethod
    def create(cls) -> "ModelBuilder":
        """``ANeuralNetworksModel_create``: re-reads ``debug.nn.vlog`` (initVLogMask), then
        makes an empty model. Step models built by the partitioner use the constructor."""
        vlog.init_vlog_mask()
        return cls()

    # -- state checks --------------------------------------------------------------------------
    def _check_modifiable(self, fn: str) -> None:
        if self.invalid:
            raise BadStateError(f"{fn} can't modify an invalid model")
        if self.finished:
            raise BadStateError(f"{fn} can't modify after model finished")

    def _check_index(self, fn: str, index: int) -> Operand:
        if not isinstance(index, (int, np.integer)) or index < 0 or index >= len(self.operands):
            raise BadDataError(f"{fn} setting operand {index} of {len(self.operands)}")
        return self.operands[int(index)]

    # -- ANeuralNetworksModel_addOperand -------------------------------------------------------
    def add_operand(self, type_spec: OperandTypeSpec) -> int:
        fn = "ANeuralNetworksModel_addOperand"
        self._check_modifiable(fn)
        if type_spec is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        if type_spec.type == OperandType.OEM_SCALAR or type_spec.type == OperandType.TENSOR_OEM_BYTE:
            vlog.log_warning(TAG, "OEM data type is deprecated. Use Extensions instead.")
        validate_operand_type(type_spec, fn, allow_partial=True)
        self.operands.append(Operand(int(type_spec.type), tuple(type_spec.dimensions),
                                     float(type_spec.scale), int(type_spec.zeroPoint)))
        return len(self.operands) - 1

    # -- ANeuralNetworksModel_setOperandValue --------------------------------------------------
    def set_operand_value(self, index: int, buffer, length: int | None = None) -> None:
        fn = "ANeuralNetworksModel_setOperandValue"
        self._check_modifiable(fn)
        operand = self._check_index(fn, index)
        vlog.vlog(vlog.MODEL, TAG, f"setOperandValue for operand {index} size "
                                   f"{0 if buffer is None else length or _nbytes(buffer)}")
        if buffer is None:
            if length:
                raise UnexpectedNullError(f"{fn} passed a nullptr with length {length}")
            operand.lifetime, operand.value = L.NO_VALUE, None
            return
        data = _to_bytes(buffer)
        if length is None:
            length = len(data)
        if length > len(data):
            raise BadDataError(f"{fn} length {length} exceeds the buffer ({len(data)} bytes)")
        data = data[:length]
        if operand.type == OperandType.OEM_SCALAR:
            needed = length
        else:
            if not operand.is_fully_specified:
                raise BadDataError(f"{fn} setting operand {index} which has operand type that "
                                   f"is not fully specified")
            needed = operand.byte_size()
        if length != needed:
            raise BadDataError(f"{fn} setting operand {index} value length {length} but operand "
                               f"needs {needed}")
        if length > 0xFFFFFFFF:
            raise BadDataError(f"{fn} value length of {length} exceeds max")
        operand.value = bytes(data)
        if length <= MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES:
            operand.lifetime = L.CONSTANT_COPY
        else:
            operand.lifetime = L.CONSTANT_REFERENCE
            vlog.vlog(vlog.MODEL, TAG, "Saving large value")

    def set_operand_value_from_memory(self, index: int, memory, offset: int, length: int) -> None:
        fn = "ANeuralNetworksModel_setOperandValueFromMemory"
        self._check_modifiable(fn)
        operand = self._check_index(fn, index)
        if memory is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        if not operand.is_fully_specified:
            raise BadDataError(f"{fn} setting operand {index} which has operand type that is not "
                               f"fully specified")
        if length != operand.byte_size():
            raise BadDataError(f"{fn} setting operand {index} value length {length} but operand "
                               f"needs {operand.byte_size()}")
        operand.value = memory.view(offset, length)
        operand.lifetime = L.CONSTANT_REFERENCE

    def set_operand_value_from_model(self, index: int, model: "ModelBuilder") -> None:
        """Upstream order of checks: state, then the value model (finished: BAD_STATE; invalid:
        BAD_STATE), then the index. The operand type is not checked here: a non-MODEL operand
        with a SUBGRAPH value fails Model_finish (type and lifetime must go together)."""
        fn = "ANeuralNetworksModel_setOperandValueFromModel"
        if model is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        vlog.vlog(vlog.MODEL, TAG, f"setOperandValueFromModel for operand {index} model "
                                   f"0x{id(model):x}")
        self._check_modifiable(fn)
        if not model.finished:
            raise BadStateError(f"{fn} value model must be finished")
        if model.invalid:
            raise BadStateError(f"{fn} value model is invalid")
        operand = self._check_index(fn, index)
        operand.subgraph, operand.lifetime, operand.value = model, L.SUBGRAPH, None

    def set_operand_symm_per_channel_quant_params(self, index: int,
                                                  params: SymmPerChannelQuantParams) -> None:
        fn = "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"
        self._check_modifiable(fn)
        operand = self._check_index(fn, index)
        if params is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        if operand.type != OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            raise BadDataError(f"{fn} setting per-channel quantization parameters for operand "
                               f"{index} of type {operand.type}")
        dims = operand.dimensions
        cd = params.channelDim
        if not (0 <= cd < len(dims)):
            raise BadDataError(f"{fn} channelDim {cd} out of range for rank {len(dims)}")
        if dims[cd] == 0 or len(params.scales) == 0 or len(params.scales) != dims[cd]:
            raise BadDataError(f"{fn} scale count {len(params.scales)} does not match dimension "
                               f"{dims[cd]}")
        if any(not (s > 0) for s in params.scales):
            raise BadDataError(f"{fn} has a non-positive scale")
        operand.channel_quant = params

    # -- ANeuralNetworksModel_addOperation -----------------------------------------------------
    def add_operation(self, op_type: int, inputs, outputs) -> None:
        fn = "ANeuralNetworksModel_addOperation"
        self._check_modifiable(fn)
        if inputs is None or outputs is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        if not _is_valid_operation_code(op_type):
            raise BadDataError(f"{fn} invalid operation type {op_type}")
        if op_type == OperationCode.OEM_OPERATION:
            vlog.log_warning(TAG, "OEM_OPERATION is deprecated. Use Extensions instead.")
        inputs, outputs = tuple(int(i) for i in inputs), tuple(int(o) for o in outputs)
        for i in inputs + outputs:
            if i < 0 or i >= len(self.operands):
                raise BadDataError(f"{fn} operand index {i} out of range (count "
                                   f"{len(self.operands)})")
        _validate_operation(self.operands, op_type, inputs, outputs, None)
        self.operations.append(Operation(int(op_type), inputs, outputs))
        for i in inputs:
            self.operands[i].number_of_consumers += 1

    # -- ANeuralNetworksModel_identifyInputsAndOutputs -----------------------------------------
    def identify_inputs_and_outputs(self, inputs, outputs) -> None:
        fn = "ANeuralNetworksModel_identifyInputsAndOutputs"
        self._check_modifiable(fn)
        if inputs is None or outputs is None:
            raise UnexpectedNullError(f"{fn} passed a nullptr")
        ins, outs = [int(i) for i in inputs], [int(o) for o in outputs]
        for lst, lifetime in ((ins, L.SUBGRAPH_INPUT), (outs, L.SUBGRAPH_OUTPUT)):
            for i in lst:
                if i < 0 or i >= len(self.operands):
                    raise BadDataError(f"{fn} Can't set input or output to be {i} as this "
                                       f"exceeds the numbe of operands {len(self.operands)}")
                if self.operands[i].lifetime != L.TEMPORARY_VARIABLE:
                    raise BadDataError(f"{fn} Can't set operand {i} to be an input or output.  "
                                       f"Check that it's not a constant or already an input or "
                                       f"output")
                self.operands[i].lifetime = lifetime
        self.input_indexes, self.output_indexes = ins, outs

    def relax_computation_float32_to_float16(self, allow: bool) -> None:
        self._check_modifiable("ANeuralNetworksModel_relaxComputationFloat32toFloat16")
        self.relax_float32_to_float16 = bool(allow)

    # -- ANeuralNetworksModel_finish -----------------------------------------------------------
    def finish(self) -> None:
        fn = "ANeuralNetworksModel_finish"
        if self.finished:
            raise BadStateError(f"{fn} called more than once")
        if self.invalid:
            raise BadStateError(f"{fn} called on an invalid model")
        large = sum(1 for o in self.operands if o.lifetime == L.CONSTANT_REFERENCE)
        vlog.vlog(vlog.MODEL, TAG, f"copyLargeValuesToSharedMemory has {large} values.")
        try:
            self._sort_into_run_order()
            self._validate_model()
        except NnapiError as e:
            self.invalid = True
            vlog.log_error(TAG, f"{fn} called on invalid model: {e}")
            err = BadDataError(f"{fn} called on invalid model: {e}")
            err.logged = True  # logged once, here, under ModelBuilder's tag as upstream
            raise err from None
        if self.feature_level > self.runtime_feature_level:
            self.invalid = True
            raise BadDataError(f"{fn} called on a model that is newer what is allowed")
        if vlog.vlog_is_on(vlog.MODEL):
            graph_dump("ModelBuilder::finish", self)
        self._remove_trailing_arguments_with_default_values()
        self.finished = True

    def _sort_into_run_order(self) -> None:
        """LIFO topological sort, exactly as ModelBuilder::sortIntoRunOrder (reference 1.6)."""
        counts, consumers = unknown_input_counts(self.operands, self.operations)
        ready = [k for k, n in enumerate(counts) if n == 0]
        order = []
        while ready:
            k = ready.pop()
            order.append(k)
            for out in self.operations[k].outputs:
                for c in consumers.get(out, ()):
                    counts[c] -= 1
                    if counts[c] == 0:
                        ready.append(c)
        if len(order) != len(self.operations):
            raise BadDataError("Graph contains at least one cycle or one never-written operand")
        self.operations = [self.operations[k] for k in order]
        self.sorted_to_original = order

    def _validate_model(self) -> None:
        if not self.operands:
            raise BadDataError("model has no operands")
        if not self.operations:
            raise BadDataError("model has no operations")
        level = FL1
        for idx, operand in enumerate(self.operands):
            level = max(level, validate_operand_finish(idx, operand))
            if operand.lifetime == L.SUBGRAPH:
                level = max(level, operand.subgraph.feature_level)
        if self.relax_float32_to_float16:
            level = max(level, 28)  # relaxed computation arrived in NNAPI 1.1
        for idx, op in enumerate(self.operations):
            op.min_feature_level = _validate_operation(self.operands, op.type, op.inputs,
                                                       op.outputs, idx)
            level = max(level, op.min_feature_level)
        for name, lst, lifetime in (("input", self.input_indexes, L.SUBGRAPH_INPUT),
                                    ("output", self.output_indexes, L.SUBGRAPH_OUTPUT)):
            if len(set(lst)) != len(lst):
                raise BadDataError(f"model {name} indexes contain duplicates")
            for i in lst:
                if self.operands[i].lifetime != lifetime:
                    raise BadDataError(f"model {name} {i} has the wrong lifetime")
            declared = [k for k, o in enumerate(self.operands) if o.lifetime == lifetime]
            if sorted(declared) != sorted(lst):
                raise BadDataError(f"an operand with lifetime {lifetime.name} is not a model "
                                   f"{name}")
        written = set(k for k, o in enumerate(self.operands)
                      if o.lifetime not in (L.TEMPORARY_VARIABLE, L.SUBGRAPH_OUTPUT))
        for idx, op in enumerate(self.operations):
            for i in op.inputs:
                if i not in written:
                    raise BadDataError(f"Operation {idx} reads operand {i} before it is written")
            for o in op.outputs:
                operand = self.operands[o]
                if operand.lifetime not in (L.TEMPORARY_VARIABLE, L.SUBGRAPH_OUTPUT):
                    raise BadDataError(f"Operation {idx} writes to operand {o} which is not a "
                                       f"temporary or model output")
                if o in written:
                    raise BadDataError(f"Operand {o} is written more than once")
                written.add(o)
        for k in range(len(self.operands)):
            if k not in written:
                raise BadDataError(f"Operand {k} is never written")
        for operand in self.operands:
            level = max(level, operand_type_feature_level(operand))
        self.feature_level = level

    def _remove_trailing_arguments_with_default_values(self) -> None:
        self.compiled_inputs = []
        for op in self.operations:
            n = trailing_arguments_to_remove(self.operands, op)
            if n:
                vlog.vlog(vlog.MODEL, TAG,
                          f"Operation {OperationCode(op.type).name} with inputs "
                          f"{{{', '.join(map(str, op.inputs))}}} has trailing optional inputs set "
                          f"to default values. Removing {n} trailing inputs.")
                self.compiled_inputs.append(op.inputs[:len(op.inputs) - n])
            else:
                self.compiled_inputs.append(op.inputs)

    # -- queries ------------------------------------------------------------------------------
    def operation_name(self, index: int) -> str:
        return OperationCode(self.operations[index].type).name

    def has_oem_operation(self) -> bool:
        return any(op.type == OperationCode.OEM_OPERATION for op in self.operations)

    def referenced_models(self) -> list["ModelBuilder"]:
        """The models this model's SUBGRAPH operands reference directly, in operand order."""
        return [o.subgraph for o in self.operands if o.lifetime == L.SUBGRAPH]

    def referenced_subgraphs(self) -> list["ModelBuilder"]:
        """``Model::referenced`` of the canonical model (``ModelMaker``): every model reachable
        through SUBGRAPH operands, depth first, one entry per reference (a model referenced
        twice appears twice, as upstream's b/147875885 notes)."""
        out = []

        def walk(model):
            for ref in model.referenced_models():
                out.append(ref)
                walk(ref)
        walk(self)
        return out

    def has_control_flow(self) -> bool:
        return any(op.type in (OperationCode.IF, OperationCode.WHILE) for op in self.operations)


def unknown_input_counts(operands, operations) -> tuple[list, dict]:
    """Per operation, how many inputs are not known before it runs (TEMPORARY_VARIABLE or
    SUBGRAPH_OUTPUT operands), and operand -> consuming operations in ascending order.

    The run-order sort and the partitioner's OperandTracker both start from this.
    """
    counts, consumers = [], {}
    for op_idx, op in enumerate(operations):
        n = 0
        for i in op.inputs:
            if operands[i].lifetime in (L.TEMPORARY_VARIABLE, L.SUBGRAPH_OUTPUT):
                n += 1
                consumers.setdefault(i, []).append(op_idx)
        counts.append(n)
    return counts, consumers


def _is_valid_operation_code(code) -> bool:
    try:
        OperationCode(int(code))
        return True
    except (ValueError, TypeError):
        return False


def _validate_operation(operands, op_type, inputs, outputs, op_index) -> int:
    """Run the operation's validator; NOT_IMPLEMENTED ops get only the generic checks."""
    spec = lookup(op_type)
    if spec is None:
        return int(operation_introduced_in(op_type))
    ctx = ValidationContext(operands, op_type, inputs, outputs, op_index)
    for k, i in enumerate(inputs):
        if operands[i].lifetime == L.NO_VALUE and not spec.allow_omitted_operand:
            ctx.fail(f"input {k} (operand {i}) is omitted")
    return int(spec.validate(ctx))


def _nbytes(buffer) -> int:
    return buffer.nbytes if hasattr(buffer, "nbytes") else len(buffer)


def _to_bytes(buffer) -> bytes:
    if isinstance(buffer, np.ndarray):
        return np.ascontiguousarray(buffer).tobytes()
    if isinstance(buffer, (bytes, bytearray, memoryview)):
        return bytes(buffer)
    raise BadDataError(f"unsupported buffer type {type(buffer).__name__}")
