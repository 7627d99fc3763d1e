"""NNAPI enums with their exact numeric values.

Source: NeuralNetworksTypes.h (packages/modules/NeuralNetworks @ 690f68ca), as transcribed in
docs/reference/nnapi-runtime.md sections 1.2-1.4. Member names are spelled as in NNAPI without the
``ANEURALNETWORKS_`` prefix so that ``OperationCode.CONV_2D.name`` is what the runtime logs.
"""
from __future__ import annotations

from enum import IntEnum

# nnapi-runtime.md 1.4
BYTE_SIZE_OF_CACHE_TOKEN = 32
MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = 128
MAX_NUMBER_OF_OPERANDS = 0xFFFFFFFE
MAX_NUMBER_OF_OPERATIONS = 0xFFFFFFFE
FLT_MAX = 3.4028234663852886e38


class OperandType(IntEnum):
    FLOAT32 = 0
    INT32 = 1
    UINT32 = 2
    TENSOR_FLOAT32 = 3
    TENSOR_INT32 = 4
    TENSOR_QUANT8_ASYMM = 5
    BOOL = 6
    TENSOR_QUANT16_SYMM = 7
    TENSOR_FLOAT16 = 8
    TENSOR_BOOL8 = 9
    FLOAT16 = 10
    TENSOR_QUANT8_SYMM_PER_CHANNEL = 11
    TENSOR_QUANT16_ASYMM = 12
    TENSOR_QUANT8_SYMM = 13
    TENSOR_QUANT8_ASYMM_SIGNED = 14
    MODEL = 15  # canonical name SUBGRAPH (GraphDump prints "SUBGRAPH")
    OEM_SCALAR = 10000
    TENSOR_OEM_BYTE = 10001


SCALAR_TYPES = frozenset({
    OperandType.FLOAT32, OperandType.INT32, OperandType.UINT32, OperandType.BOOL,
    OperandType.FLOAT16, OperandType.MODEL, OperandType.OEM_SCALAR,
})

# Element sizes in bytes (T13 common/types/src/TypeUtils.cpp getNonExtensionSize).
ELEMENT_SIZE = {
    OperandType.FLOAT32: 4, OperandType.INT32: 4, OperandType.UINT32: 4,
    OperandType.TENSOR_FLOAT32: 4, OperandType.TENSOR_INT32: 4, OperandType.TENSOR_QUANT8_ASYMM: 1,
    OperandType.BOOL: 1, OperandType.TENSOR_QUANT16_SYMM: 2, OperandType.TENSOR_FLOAT16: 2,
    OperandType.TENSOR_BOOL8: 1, OperandType.FLOAT16: 2, OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL: 1,
    OperandType.TENSOR_QUANT16_ASYMM: 2, OperandType.TENSOR_QUANT8_SYMM: 1,
    OperandType.TENSOR_QUANT8_ASYMM_SIGNED: 1, OperandType.MODEL: 0, OperandType.OEM_SCALAR: 0,
    OperandType.TENSOR_OEM_BYTE: 1,
}

# numpy dtype names per operand type (used to view raw buffers).
NUMPY_DTYPE = {
    OperandType.FLOAT32: "float32", OperandType.INT32: "int32", OperandType.UINT32: "uint32",
    OperandType.TENSOR_FLOAT32: "float32", OperandType.TENSOR_INT32: "int32",
    OperandType.TENSOR_QUANT8_ASYMM: "uint8", OperandType.BOOL: "bool",
    OperandType.TENSOR_QUANT16_SYMM: "int16", OperandType.TENSOR_FLOAT16: "float16",
    OperandType.TENSOR_BOOL8: "bool", OperandType.FLOAT16: "float16",
    OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL: "int8", OperandType.TENSOR_QUANT16_ASYMM: "uint16",
    OperandType.TENSOR_QUANT8_SYMM: "int8", OperandType.TENSOR_QUANT8_ASYMM_SIGNED: "int8",
    OperandType.TENSOR_OEM_BYTE: "uint8",
}

# GraphDump abbreviations (nnapi-runtime.md 4.2); every other type prints its full name.
GRAPHDUMP_SHORT_NAME = {
    OperandType.FLOAT32: "F32", OperandType.INT32: "I32", OperandType.UINT32: "U32",
    OperandType.TENSOR_FLOAT32: "TF32", OperandType.TENSOR_INT32: "TI32",
    OperandType.TENSOR_QUANT8_ASYMM: "TQ8A", OperandType.OEM_SCALAR: "OEM",
    OperandType.TENSOR_OEM_BYTE: "TOEMB", OperandType.MODEL: "SUBGRAPH",
}


class OperationCode(IntEnum):
    ADD = 0
    AVERAGE_POOL_2D = 1
    CONCATENATION = 2
    CONV_2D = 3
    DEPTHWISE_CONV_2D = 4
    DEPTH_TO_SPACE = 5
    DEQUANTIZE = 6
    EMBEDDING_LOOKUP = 7
    FLOOR = 8
    FULLY_CONNECTED = 9
    HASHTABLE_LOOKUP = 10
    L2_NORMALIZATION = 11
    L2_POOL_2D = 12
    LOCAL_RESPONSE_NORMALIZATION = 13
    LOGISTIC = 14
    LSH_PROJECTION = 15
    LSTM = 16
    MAX_POOL_2D = 17
    MUL = 18
    RELU = 19
    RELU1 = 20
    RELU6 = 21
    RESHAPE = 22
    RESIZE_BILINEAR = 23
    RNN = 24
    SOFTMAX = 25
    SPACE_TO_DEPTH = 26
    SVDF = 27
    TANH = 28
    BATCH_TO_SPACE_ND = 29
    DIV = 30
    MEAN = 31
    PAD = 32
    SPACE_TO_BATCH_ND = 33
    SQUEEZE = 34
    STRIDED_SLICE = 35
    SUB = 36
    TRANSPOSE = 37
    ABS = 38
    ARGMAX = 39
    ARGMIN = 40
    AXIS_ALIGNED_BBOX_TRANSFORM = 41
    BIDIRECTIONAL_SEQUENCE_LSTM = 42
    BIDIRECTIONAL_SEQUENCE_RNN = 43
    BOX_WITH_NMS_LIMIT = 44
    CAST = 45
    CHANNEL_SHUFFLE = 46
    DETECTION_POSTPROCESSING = 47
    EQUAL = 48
    EXP = 49
    EXPAND_DIMS = 50
    GATHER = 51
    GENERATE_PROPOSALS = 52
    GREATER = 53
    GREATER_EQUAL = 54
    GROUPED_CONV_2D = 55
    HEATMAP_MAX_KEYPOINT = 56
    INSTANCE_NORMALIZATION = 57
    LESS = 58
    LESS_EQUAL = 59
    LOG = 60
    LOGICAL_AND = 61
    LOGICAL_NOT = 62
    LOGICAL_OR = 63
    LOG_SOFTMAX = 64
    MAXIMUM = 65
    MINIMUM = 66
    NEG = 67
    NOT_EQUAL = 68
    PAD_V2 = 69
    POW = 70
    PRELU = 71
    QUANTIZE = 72
    QUANTIZED_16BIT_LSTM = 73
    RANDOM_MULTINOMIAL = 74
    REDUCE_ALL = 75
    REDUCE_ANY = 76
    REDUCE_MAX = 77
    REDUCE_MIN = 78
    REDUCE_PROD = 79
    REDUCE_SUM = 80
    ROI_ALIGN = 81
    ROI_POOLING = 82
    RSQRT = 83
    SELECT = 84
    SIN = 85
    SLICE = 86
    SPLIT = 87
    SQRT = 88
    TILE = 89
    TOPK_V2 = 90
    TRANSPOSE_CONV_2D = 91
    UNIDIRECTIONAL_SEQUENCE_LSTM = 92
    UNIDIRECTIONAL_SEQUENCE_RNN = 93
    RESIZE_NEAREST_NEIGHBOR = 94
    QUANTIZED_LSTM = 95
    IF = 96
    WHILE = 97
    ELU = 98
    HARD_SWISH = 99
    FILL = 100
    RANK = 101
    BATCH_MATMUL = 102
    PACK = 103
    MIRROR_PAD = 104
    REVERSE = 105
    OEM_OPERATION = 10000


class FeatureLevel(IntEnum):
    """ANEURALNETWORKS_FEATURE_LEVEL_* codes (FeatureLevelCode)."""
    FEATURE_LEVEL_1 = 27
    FEATURE_LEVEL_2 = 28
    FEATURE_LEVEL_3 = 29
    FEATURE_LEVEL_4 = 30
    FEATURE_LEVEL_5 = 31
    FEATURE_LEVEL_6 = 1000006
    FEATURE_LEVEL_7 = 1000007
    FEATURE_LEVEL_8 = 1000008


FL1, FL2, FL3, FL4, FL5, FL6, FL7, FL8 = tuple(FeatureLevel)

# Operation -> feature level that introduced it (nnapi-runtime.md 1.3).
_OP_FL2 = {29, 30, 31, 32, 33, 34, 35, 36, 37}
_OP_FL4 = {95, 96, 97, 98, 99, 100, 101}
_OP_FL6 = {102, 103}
_OP_FL7 = {104, 105}


def operation_introduced_in(code: int) -> FeatureLevel:
    if code <= 28 or code == OperationCode.OEM_OPERATION:
        return FL1
    if code in _OP_FL2:
        return FL2
    if code in _OP_FL4:
        return FL4
    if code in _OP_FL6:
        return FL6
    if code in _OP_FL7:
        return FL7
    return FL3


class ResultCode(IntEnum):
    NO_ERROR = 0
    OUT_OF_MEMORY = 1
    INCOMPLETE = 2
    UNEXPECTED_NULL = 3
    BAD_DATA = 4
    OP_FAILED = 5
    BAD_STATE = 6
    UNMAPPABLE = 7
    OUTPUT_INSUFFICIENT_SIZE = 8
    UNAVAILABLE_DEVICE = 9
    MISSED_DEADLINE_TRANSIENT = 10
    MISSED_DEADLINE_PERSISTENT = 11
    RESOURCE_EXHAUSTED_TRANSIENT = 12
    RESOURCE_EXHAUSTED_PERSISTENT = 13
    DEAD_OBJECT = 14


class PreferenceCode(IntEnum):
    PREFER_LOW_POWER = 0
    PREFER_FAST_SINGLE_ANSWER = 1
    PREFER_SUSTAINED_SPEED = 2


class PriorityCode(IntEnum):
    PRIORITY_LOW = 90
    PRIORITY_MEDIUM = 100
    PRIORITY_HIGH = 110
    PRIORITY_DEFAULT = 100  # alias of PRIORITY_MEDIUM


class DurationCode(IntEnum):
    DURATION_ON_HARDWARE = 0
    DURATION_IN_DRIVER = 1
    FENCED_DURATION_ON_HARDWARE = 2
    FENCED_DURATION_IN_DRIVER = 3


class DeviceType(IntEnum):
    DEVICE_UNKNOWN = 0
    DEVICE_OTHER = 1
    DEVICE_CPU = 2
    DEVICE_GPU = 3
    DEVICE_ACCELERATOR = 4


class FuseCode(IntEnum):
    FUSED_NONE = 0
    FUSED_RELU = 1
    FUSED_RELU1 = 2
    FUSED_RELU6 = 3


class PaddingCode(IntEnum):
    PADDING_SAME = 1
    PADDING_VALID = 2


class OperandLifeTime(IntEnum):
    """Operand lifetimes (canonical Operand::LifeTime order)."""
    TEMPORARY_VARIABLE = 0
    SUBGRAPH_INPUT = 1
    SUBGRAPH_OUTPUT = 2
    CONSTANT_COPY = 3
    CONSTANT_REFERENCE = 4
    NO_VALUE = 5
    SUBGRAPH = 6
    POINTER = 7


# Loop timeouts (T13 common/types/include/nnapi/Types.h).
LOOP_TIMEOUT_DEFAULT_NS = 2_000_000_000
LOOP_TIMEOUT_MAXIMUM_NS = 15_000_000_000
