"""The timing model: simulated device time of a prepared step (npu-drivers.md 2.9, 3.4, 4.3-4.5).

Every number comes from a board profile (``drivers/data/<board>.json``, loaded by
:mod:`nnsim.drivers.profiles`); this module only holds the structure of the model:

* **per operation** (:func:`op_stats`): MACs, activation bytes read/written and weight bytes,
  computed from the operand shapes of the step model;
* **execution unit** (:func:`npu_unit`, reference 3.4 and 4.4): 8-bit CONV/DEPTHWISE/ADD/SUB on
  the NN core, 8-bit fully-connected, pooling, activations and data movement on the tensor
  processor (TP), float32 work, softmax, reductions and the rest on the PPU/shader (SH);
  RESHAPE-like ops are not executed (``--``). int8 with per-channel weights is NN with PPU help
  (a cost factor);
* **NPU step cost**: per op ``max(MACs / (unit rate x efficiency), bytes / DDR bandwidth) + unit
  overhead``; per call the HAL/RPC + driver submission overhead; CPU<->NPU copies of every step
  input and output (model I/O and partition boundaries alike);
* **first inference**: graph compilation (conversion) from a fixed part, a per-op part and a
  per-weight-byte part; what the NNAPI compilation cache (load instead of compile) and the
  SyNAP compile cache (a speed-up factor, reference 4.1) save;
* **CPU cost** of nnapi-reference: MACs at a per-type rate plus bytes plus a per-op overhead
  (the current board's CPU: :func:`nnsim.drivers.reference.reference_cpu_timing`).

A simulated driver holds a :class:`TimingModel`: these functions bound to its own
:class:`NpuParams`, so two accelerators of one board can have different timing.

``device_ns`` is the time on the hardware (``DURATION_ON_HARDWARE``); ``driver_ns`` adds what
the driver side spends around it (HAL/RPC, transfers, conversion at the first run), which is
what an application's wall clock sees and what the calibration compares with benchmark_model.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nnsim.types import ELEMENT_SIZE, SCALAR_TYPES, OperandType, OperationCode

T = OperandType
C = OperationCode

QUANT8 = frozenset({T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED})
FLOAT16 = frozenset({T.TENSOR_FLOAT16})

# Operation classes of the timing model.
_CLASS = {
    C.CONV_2D: "conv", C.GROUPED_CONV_2D: "conv", C.TRANSPOSE_CONV_2D: "conv",
    C.DEPTHWISE_CONV_2D: "depthwise", C.FULLY_CONNECTED: "fc",
    C.AVERAGE_POOL_2D: "pool", C.MAX_POOL_2D: "pool", C.L2_POOL_2D: "pool",
    C.ADD: "add", C.SUB: "add",
    C.MUL: "eltwise", C.DIV: "eltwise", C.MAXIMUM: "eltwise", C.MINIMUM: "eltwise",
    C.POW: "eltwise", C.SELECT: "eltwise", C.PRELU: "eltwise",
    C.RELU: "activation", C.RELU1: "activation", C.RELU6: "activation",
    C.LOGISTIC: "activation", C.TANH: "activation", C.HARD_SWISH: "activation",
    C.ELU: "activation", C.ABS: "activation",
    C.SOFTMAX: "softmax", C.LOG_SOFTMAX: "softmax",
    C.MEAN: "reduce", C.REDUCE_MAX: "reduce", C.REDUCE_MIN: "reduce", C.REDUCE_SUM: "reduce",
    C.REDUCE_PROD: "reduce", C.REDUCE_ANY: "reduce", C.REDUCE_ALL: "reduce",
    C.ARGMAX: "reduce", C.ARGMIN: "reduce",
    C.RESHAPE: "reshape", C.SQUEEZE: "reshape", C.EXPAND_DIMS: "reshape",
    C.CONCATENATION: "move", C.PAD: "move", C.PAD_V2: "move", C.TRANSPOSE: "move",
    C.SLICE: "move", C.STRIDED_SLICE: "move", C.SPLIT: "move", C.SPACE_TO_DEPTH: "move",
    C.DEPTH_TO_SPACE: "move", C.SPACE_TO_BATCH_ND: "move", C.BATCH_TO_SPACE_ND: "move",
    C.CHANNEL_SHUFFLE: "move", C.MIRROR_PAD: "move", C.REVERSE: "move",
    C.QUANTIZE: "convert", C.DEQUANTIZE: "convert", C.CAST: "convert",
    C.L2_NORMALIZATION: "norm", C.LOCAL_RESPONSE_NORMALIZATION: "norm",
    C.INSTANCE_NORMALIZATION: "norm",
    # element-wise comparisons and logic
    C.EQUAL: "eltwise", C.NOT_EQUAL: "eltwise", C.GREATER: "eltwise", C.GREATER_EQUAL: "eltwise",
    C.LESS: "eltwise", C.LESS_EQUAL: "eltwise", C.LOGICAL_AND: "eltwise",
    C.LOGICAL_OR: "eltwise", C.LOGICAL_NOT: "eltwise",
    # data movement and generation
    C.TILE: "move", C.FILL: "move", C.PACK: "move", C.GATHER: "other", C.RANK: "reshape",
    C.EMBEDDING_LOOKUP: "other", C.HASHTABLE_LOOKUP: "other",
    C.LSH_PROJECTION: "other", C.RANDOM_MULTINOMIAL: "other",
    C.TOPK_V2: "reduce", C.BATCH_MATMUL: "fc",
    # the generic class on purpose: one MAC per element, as calibrated (benchmarks/README)
    C.RESIZE_BILINEAR: "other", C.RESIZE_NEAREST_NEIGHBOR: "other", C.EXP: "other",
    C.LOG: "other", C.SQRT: "other", C.RSQRT: "other", C.NEG: "other", C.FLOOR: "other",
    C.SIN: "other",
    # detection / ROI ops: per-box and per-bin work, the generic class (AOSP CPU-only ops)
    C.AXIS_ALIGNED_BBOX_TRANSFORM: "other", C.BOX_WITH_NMS_LIMIT: "other", C.ROI_ALIGN: "pool",
    C.GENERATE_PROPOSALS: "other", C.DETECTION_POSTPROCESSING: "other", C.ROI_POOLING: "pool",
    C.HEATMAP_MAX_KEYPOINT: "other",
    # recurrent cells: matrix-vector products per time step (TP + PPU on VeriSilicon, 2.4)
    C.LSTM: "fc", C.RNN: "fc", C.SVDF: "fc", C.UNIDIRECTIONAL_SEQUENCE_LSTM: "fc",
    C.BIDIRECTIONAL_SEQUENCE_LSTM: "fc", C.UNIDIRECTIONAL_SEQUENCE_RNN: "fc",
    C.BIDIRECTIONAL_SEQUENCE_RNN: "fc", C.QUANTIZED_16BIT_LSTM: "fc", C.QUANTIZED_LSTM: "fc",
    # control flow run whole on one device (the CPU): only the copies of its operands are
    # charged here; the branch / loop bodies are not seen by this per-operation model
    C.IF: "other", C.WHILE: "other",
}


def op_class(code: int) -> str:
    """The timing model's class of an operation; "" when the model has none for it (it is
    then costed with the generic class, "other")."""
    return _CLASS.get(code, "")


# MACs per output element for transcendental / multi-pass element ops (an assumption).
_ELEMENT_WORK = {"softmax": 4, "activation": 1, "norm": 3, "eltwise": 1, "add": 1}

# Layer names of the SyNAP network_profile (reference 4.2: ConvolutionReluPoolingLayer2,
# TensorTranspose, FullyConnectedReluLayer, Softmax2Layer are documented; the others are
# nnsim's names in the same style).
_LAYER_NAME = {"conv": "ConvolutionReluPoolingLayer2", "depthwise": "ConvolutionReluPoolingLayer2",
               "fc": "FullyConnectedReluLayer", "softmax": "Softmax2Layer",
               "pool": "PoolingLayer2", "add": "EltwiseLayer", "eltwise": "EltwiseLayer",
               "activation": "ActivationLayer", "reduce": "ReduceLayer",
               "reshape": "TensorReshape", "move": "TensorTranspose", "convert": "DataConvertLayer",
               "norm": "NormalizationLayer", "other": "ShaderLayer"}


@dataclass
class OpStats:
    """What one operation does, independent of the device."""
    index: int
    code: int
    op_class: str
    input_type: int
    macs: int
    bytes_read: int       # non-constant tensor inputs
    bytes_written: int    # outputs
    weight_bytes: int     # constant tensor inputs
    per_channel: bool = False

    @property
    def name(self) -> str:
        return OperationCode(self.code).name


@dataclass
class OpCost:
    stats: OpStats
    unit: str             # "NN", "TP", "SH", "--" or "CPU"
    compute_ns: float
    memory_ns: float
    overhead_ns: float

    @property
    def total_ns(self) -> float:
        return max(self.compute_ns, self.memory_ns) + self.overhead_ns

    @property
    def layer_name(self) -> str:
        return _LAYER_NAME.get(self.stats.op_class, "ShaderLayer")


@dataclass
class StepCost:
    """The simulated cost of one prepared step model."""
    ops: list[OpCost] = field(default_factory=list)
    call_overhead_ns: float = 0.0
    transfer_ns: float = 0.0
    io_buffers: int = 0
    io_bytes: int = 0
    weight_bytes: int = 0

    @property
    def device_ns(self) -> float:
        return sum(c.total_ns for c in self.ops)

    @property
    def driver_ns(self) -> float:
        return self.device_ns + self.call_overhead_ns + self.transfer_ns

    def summary(self) -> dict:
        by_unit: dict[str, float] = {}
        for c in self.ops:
            by_unit[c.unit] = by_unit.get(c.unit, 0.0) + c.total_ns
        return {"device_ns": self.device_ns, "driver_ns": self.driver_ns,
                "call_overhead_ns": self.call_overhead_ns, "transfer_ns": self.transfer_ns,
                "by_unit_ns": by_unit, "weight_bytes": self.weight_bytes,
                "io_bytes": self.io_bytes, "ops": len(self.ops)}


# -- per-operation statistics ----------------------------------------------------------------------
def _elements(operand) -> int:
    n = 1
    for d in operand.dimensions:
        n *= max(int(d), 1)  # unknown (0) dimensions count as 1
    return n


def _bytes(operand) -> int:
    return _elements(operand) * ELEMENT_SIZE.get(operand.type, 4)


def _is_tensor(operand) -> bool:
    return operand.type not in SCALAR_TYPES


def _scalar(model, index, default=0) -> int:
    value = model.operands[index].array() if model.operands[index].value is not None else None
    return default if value is None else int(value)


def _inputs(model, i) -> tuple:
    op = model.operations[i]
    if model.compiled_inputs and i < len(model.compiled_inputs):
        return model.compiled_inputs[i]
    return op.inputs


_FILTER_OPS = (C.CONV_2D, C.GROUPED_CONV_2D, C.DEPTHWISE_CONV_2D, C.TRANSPOSE_CONV_2D,
               C.FULLY_CONNECTED)


def count_macs(code: int, op_class: str, out_elems: int, in_elems: int, filter_dims=None,
               window=(1, 1), adj_x: bool = False) -> int:
    """Multiply-accumulates of one operation: the one formula for NNAPI operations (op_stats)
    and TFLite CPU nodes (tflite/cpu_timing.py). ``filter_dims``: the filter's dimensions
    (CONV/GROUPED_CONV/TRANSPOSE_CONV [O, KH, KW, I], DEPTHWISE [1, KH, KW, O], FC [O, I]) or
    BATCH_MATMUL's first operand; ``window``: a pool's (width, height). Unknown (0)
    dimensions count as 1."""
    fd = [max(int(d), 1) for d in filter_dims] if filter_dims else None
    if fd is not None and code in (C.CONV_2D, C.GROUPED_CONV_2D) and len(fd) == 4:
        return out_elems * fd[1] * fd[2] * fd[3]
    if fd is not None and code == C.DEPTHWISE_CONV_2D and len(fd) == 4:
        return out_elems * fd[1] * fd[2]
    if fd is not None and code == C.TRANSPOSE_CONV_2D and len(fd) == 4:
        return in_elems * fd[0] * fd[1] * fd[2]
    if fd is not None and code == C.FULLY_CONNECTED and len(fd) == 2:
        return out_elems * fd[1]
    if fd is not None and code == C.BATCH_MATMUL:
        return out_elems * (fd[-2] if adj_x and len(fd) > 1 else fd[-1])
    if op_class == "pool":
        return out_elems * max(int(window[0]), 1) * max(int(window[1]), 1)
    if op_class == "reduce":
        return in_elems
    if op_class in _ELEMENT_WORK:
        return out_elems * _ELEMENT_WORK[op_class]
    if op_class == "reshape":
        return 0
    return max(in_elems, out_elems)


def op_stats(model, i: int) -> OpStats:
    """MACs and bytes of operation ``i`` of a finished model (shapes from its operands)."""
    op = model.operations[i]
    ins = _inputs(model, i)
    operands = model.operands
    base_class = op_class = _CLASS.get(op.type, "other")
    in0 = operands[ins[0]] if ins else None
    out_elems = sum(_elements(operands[o]) for o in op.outputs)
    in_elems = _elements(in0) if in0 is not None else 0
    weight_bytes = sum(_bytes(operands[k]) for k in ins
                       if _is_tensor(operands[k]) and operands[k].is_constant)
    bytes_read = sum(_bytes(operands[k]) for k in ins
                     if _is_tensor(operands[k]) and not operands[k].is_constant)
    bytes_written = sum(_bytes(operands[o]) for o in op.outputs)
    per_channel = False
    filter_dims, window, adj_x = None, (1, 1), False
    if op.type in _FILTER_OPS and len(ins) > 1:
        f = operands[ins[1]]
        filter_dims = tuple(int(d) for d in f.dimensions)
        per_channel = f.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL
        out_dims = operands[op.outputs[0]].dimensions
        if op.type == C.CONV_2D and len(out_dims) == 4 and len(filter_dims) == 4 and \
                _elements(operands[op.outputs[0]]) == \
                max(int(out_dims[0]), 1) * max(int(out_dims[3]), 1):
            # a CONV_2D with a 1x1 output is a fully-connected layer (SyNAP's profile of
            # mobilenet shows it as FullyConnectedReluLayer on the TP, reference 4.2)
            op_class = "fc"
    elif op_class == "pool":
        explicit = len(ins) >= 10
        window = (_scalar(model, ins[7 if explicit else 4], 1),
                  _scalar(model, ins[8 if explicit else 5], 1))
    elif op.type == C.BATCH_MATMUL and len(ins) > 2:
        filter_dims = tuple(int(d) for d in operands[ins[0]].dimensions)
        adj_x = bool(_scalar(model, ins[2], 0))
    macs = count_macs(op.type, base_class, out_elems, in_elems, filter_dims, window, adj_x)
    in_type = in0.type if in0 is not None else T.TENSOR_FLOAT32
    return OpStats(i, op.type, op_class, in_type, int(macs), int(bytes_read),
                   int(bytes_written), int(weight_bytes), per_channel)


def model_stats(model) -> list[OpStats]:
    return [op_stats(model, i) for i in range(len(model.operations))]


# -- the NPU -------------------------------------------------------------------------------------
def npu_unit(stats: OpStats) -> str:
    """Execution unit of one op on a VeriSilicon-class NPU (reference 3.4, 4.4)."""
    cls, t = stats.op_class, stats.input_type
    if cls == "reshape":
        return "--"
    if t == T.TENSOR_FLOAT32:
        return "SH"  # "anything float32 -> PPU (slow)" (4.4)
    if cls in ("conv", "depthwise"):
        return "NN" if t in QUANT8 else "SH"  # float16 convolution runs on the PPU (3.4)
    if cls == "add":
        return "NN" if t in QUANT8 else "SH"
    if cls in ("fc", "pool", "activation", "move", "convert"):
        return "TP"
    return "SH"  # softmax, reductions, eltwise MUL/DIV/MAX..., norms, misc (4.4)


@dataclass(frozen=True)
class NpuParams:
    """Timing parameters of one NPU (board profile ``npu`` section, all times in ns)."""
    clock_mhz: float
    unit_macs_per_ns: dict
    unit_overhead_ns: dict
    efficiency: dict
    per_channel_factor: float
    float16_factor: float
    ddr_bytes_per_ns: float
    call_overhead_ns: float
    transfer_bytes_per_ns: float
    transfer_per_tensor_ns: float
    compile_fixed_ns: float
    compile_per_op_ns: float
    compile_per_weight_byte_ns: float
    cache_load_fixed_ns: float
    cache_load_per_weight_byte_ns: float
    cache_store_per_weight_byte_ns: float
    synap_cache_speedup: float = 3.0
    profile_layer_overhead_ns: float = 0.0


@dataclass(frozen=True)
class CpuParams:
    """Timing parameters of the CPU running nnapi-reference (board profile ``cpu`` section)."""
    macs_per_ns: dict          # "quant8", "float32", "float16", "other"
    bytes_per_ns: float
    op_overhead_ns: float
    call_overhead_ns: float


def npu_op_cost(stats: OpStats, p: NpuParams, profiling: bool = False) -> OpCost:
    unit = npu_unit(stats)
    if unit == "--":
        return OpCost(stats, unit, 0.0, 0.0, 0.0)
    rate = p.unit_macs_per_ns[unit]
    if unit == "NN":  # utilisation of the MAC array; TP and SH rates are effective rates
        rate *= p.efficiency.get(stats.op_class, p.efficiency["other"])
    compute = stats.macs / rate if rate > 0 else 0.0
    if stats.per_channel and unit == "NN":
        compute *= p.per_channel_factor  # int8 per-channel: NN core + PPU help (3.4, 4.4)
    if stats.input_type in FLOAT16:
        compute *= p.float16_factor
    memory = (stats.bytes_read + stats.bytes_written + stats.weight_bytes) / p.ddr_bytes_per_ns
    overhead = p.unit_overhead_ns[unit]
    if profiling:
        overhead += p.profile_layer_overhead_ns  # step-by-step execution (4.1 PROFILE)
    return OpCost(stats, unit, compute, memory, overhead)


def _io_operands(model):
    return [model.operands[i] for i in list(model.input_indexes) + list(model.output_indexes)]


def npu_step_cost(model, p: NpuParams, profiling: bool = False) -> StepCost:
    """Steady-state cost of one execution of ``model`` (a step model) on the NPU."""
    ops = [npu_op_cost(s, p, profiling) for s in model_stats(model)]
    io = _io_operands(model)
    io_bytes = sum(_bytes(o) for o in io)
    transfer = io_bytes / p.transfer_bytes_per_ns + len(io) * p.transfer_per_tensor_ns
    weights = sum(c.stats.weight_bytes for c in ops)
    return StepCost(ops, p.call_overhead_ns, transfer, len(io), io_bytes, weights)


def compile_ns(step: StepCost, p: NpuParams) -> float:
    """Cold graph compilation / conversion at the first inference (2.9, 4.1, 4.5)."""
    return (p.compile_fixed_ns + p.compile_per_op_ns * len(step.ops)
            + p.compile_per_weight_byte_ns * step.weight_bytes)


def cache_load_ns(step: StepCost, p: NpuParams) -> float:
    """First inference preparation when the NNAPI compilation cache was hit (4.1, 4.5)."""
    load = p.cache_load_fixed_ns + p.cache_load_per_weight_byte_ns * step.weight_bytes
    return min(load, compile_ns(step, p))  # a cache hit never costs more than compiling


def cache_store_ns(step: StepCost, p: NpuParams) -> float:
    """Writing the compiled network into the NNAPI cache files after a cache miss."""
    return p.cache_store_per_weight_byte_ns * step.weight_bytes


def synap_cache_hit_ns(step: StepCost, p: NpuParams) -> float:
    """Conversion when the SyNAP compile cache knows the model: "typical speedup of the first
    inference by a factor of 3" (4.1)."""
    return compile_ns(step, p) / max(p.synap_cache_speedup, 1.0)


def cycles(cost: OpCost, p: NpuParams) -> int:
    """NPU cycles of one layer (network_profile ``cycle``) at the board's NPU clock."""
    return int(max(cost.compute_ns, cost.memory_ns) * p.clock_mhz / 1000.0)


@dataclass(frozen=True)
class TimingModel:
    """The timing of one simulated accelerator: the functions above with its own parameters
    (the board profile's section for that device name, :meth:`Board.timing`)."""
    params: NpuParams

    def step_cost(self, model, profiling: bool = False) -> StepCost:
        return npu_step_cost(model, self.params, profiling)

    def compile_ns(self, step: StepCost) -> float:
        return compile_ns(step, self.params)

    def cache_load_ns(self, step: StepCost) -> float:
        return cache_load_ns(step, self.params)

    def cache_store_ns(self, step: StepCost) -> float:
        return cache_store_ns(step, self.params)

    def synap_cache_hit_ns(self, step: StepCost) -> float:
        return synap_cache_hit_ns(step, self.params)

    def cycles(self, cost: OpCost) -> int:
        return cycles(cost, self.params)


# -- the CPU (nnapi-reference) ---------------------------------------------------------------------
def _cpu_rate(stats: OpStats, p: CpuParams) -> float:
    t = stats.input_type
    if t in QUANT8:
        return p.macs_per_ns["quant8"]
    if t == T.TENSOR_FLOAT32:
        return p.macs_per_ns["float32"]
    if t == T.TENSOR_FLOAT16:
        return p.macs_per_ns["float16"]
    return p.macs_per_ns["other"]


def cpu_op_cost(stats: OpStats, p: CpuParams) -> OpCost:
    compute = stats.macs / _cpu_rate(stats, p)
    memory = (stats.bytes_read + stats.bytes_written + stats.weight_bytes) / p.bytes_per_ns
    return OpCost(stats, "CPU", compute, memory, p.op_overhead_ns)


def cpu_step_cost(model, p: CpuParams) -> StepCost:
    """Cost of one execution of ``model`` by nnapi-reference's CpuExecutor (6.1, 10.4)."""
    ops = [cpu_op_cost(s, p) for s in model_stats(model)]
    io = _io_operands(model)
    return StepCost(ops, p.call_overhead_ns, 0.0, len(io), sum(_bytes(o) for o in io),
                    sum(c.stats.weight_bytes for c in ops))
