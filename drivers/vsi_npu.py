"""``vsi-npu``: VeriSilicon's NNAPI HAL on the NXP i.MX 8M Plus (npu-drivers.md 2, 10.2).

The decision procedure of ``getSupportedOperations_1_3`` (2.3), in the HAL's order:

1. ``vendor.MODEL_BLOCK_LEVEL`` > 0: the weight-MD5 check; a match refuses the whole model;
2. per operation: the ``vendor.NN_DBG_OP_BLK_LIST`` block list, then ``isSupportedOperation``:
   * *validator ops* run DimentionCheck, ConstantTensorCheck, ShareOperandCheck and the
     SignatureCheck (+ the op's extra conditions) and stop at the first failure;
   * *inline ops* run their own conditions, *default ops* none, and both then run the common
     tail (input[0] not constant except CONCATENATION/LSTM/MUL, the input-type filter, the
     rank/dimension rules), collecting every reason.

Reasons are the HAL's ``LOG(INFO)`` strings where the source has one (typos included:
"rejcet", "opearnd", "contant"); where the HAL refuses silently nnsim words a reason in the
same style. They are logged under the tag of the vendor service,
``android.hardware.neuralnetworks@1.3-service-vsi-npu-server``, framed by
``getSupportedOperations_1_3`` / ``getSupportedOperations_1_3 exit`` as on the board.

The BSP knob ``vendor.nnsim.vsi.bsp`` (default ``android-12.1.0_1.0.0``) selects the HAL
version (1.2 before ``android-11.0.0_2.0.0``, then 1.3) and the version quirks of 2.5/10.2.
"""
from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache

from nnsim.drivers.base import Capabilities, PerformanceInfo
from nnsim.drivers.profiles import get_board
from nnsim.drivers.rules import DEFAULT, INLINE, REJECT, VALIDATOR, OpRule, SupportRules, types
from nnsim.drivers.simulated import (Props, SimulatedDriver, register_properties,
                                     table_capabilities)
from nnsim.ops.base import OperationView
from nnsim.platform import vlog
from nnsim.platform.properties import getprop, getprop_int
from nnsim.platform.sysfs import device_path
from nnsim.types import (FLT_MAX, SCALAR_TYPES, FeatureLevel, OperandLifeTime, OperandType,
                         OperationCode)

T = OperandType
C = OperationCode
F32, F16, U8, I8 = T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM, \
    T.TENSOR_QUANT8_ASYMM_SIGNED
PC, I32, B8 = T.TENSOR_QUANT8_SYMM_PER_CHANNEL, T.TENSOR_INT32, T.TENSOR_BOOL8

PROP_BSP = "vendor.nnsim.vsi.bsp"
PROP_DISABLE_FLOAT = "vendor.DISABLE_FLOAT_FEATURE"
PROP_BLOCK_LEVEL = "vendor.MODEL_BLOCK_LEVEL"
PROP_OP_BLOCK_LIST = "vendor.NN_DBG_OP_BLK_LIST"
PROP_MODEL_BLOCK_LIST = "vendor.nnsim.vsi.model_block_list"
DEFAULT_BSP = "android-12.1.0_1.0.0"
VERSION_STRING = "android hal vsi npu 1.2 alpha"  # unchanged in the 1.3 service (2.1)


# -- BSP versions (2.1, 2.5, 10.2) -------------------------------------------------------------------
def parse_bsp(tag: str) -> tuple:
    """``android-12.1.0_1.0.0`` -> (12, 1, 0, 1, 0, 0); ValueError if malformed."""
    m = re.fullmatch(r"android-(\d+)\.(\d+)\.(\d+)_(\d+)\.(\d+)\.(\d+)", tag.strip())
    if not m:
        raise ValueError(f"not an nn-imx BSP tag: {tag!r} (expected e.g. {DEFAULT_BSP})")
    return tuple(int(g) for g in m.groups())


BSP_HAL13 = parse_bsp("android-11.0.0_2.0.0")        # first tag with the 1.3 service (2.1, 2.5)
BSP_UNARY_RANK4 = parse_bsp("android-12.0.0_1.0.0")  # "reject elementwise unary op rank > 4",
#                                                      2021-05 (2.5); first tag after [inferred]
BSP_RESIZE_12_1 = parse_bsp("android-12.1.0_1.0.0")  # resize flags on, RESIZE_NN off (2.4, 2.5)
BSP_NO_UNI_RNN = parse_bsp("android-13.0.0_1.0.0")   # "Disable uni-direction rnn", 2022-09 (2.5);
#                                                      first tag after it [inferred]


# -- the checks ------------------------------------------------------------------------------------
def _is_tensor(operand) -> bool:
    return operand.type not in SCALAR_TYPES


def _dims_reasons(view: OperationView, first_only: bool) -> list[str]:
    """Rank 1..6 and no 0 dimension on every input and output tensor (2.3)."""
    out = []
    sides = (("input", [view.input(k) for k in range(view.num_inputs)]),
             ("output", [view.output(k) for k in range(view.num_outputs)]))
    for side, operands in sides:
        if not operands:
            out.append(f"reject op because no {side}")
        for operand in operands:
            if not _is_tensor(operand):
                continue
            dims = operand.dimensions
            if len(dims) == 0:
                out.append(f"reject op because its {side} tensor rank = 0")
            if len(dims) > 6:
                out.append(f"reject op because its {side} rank > 6")
            out.extend(f"reject op because its {side} shape not determined which require shape "
                       f"inference" for d in dims if d == 0)
            if first_only and out:
                return out[:1]
    return out


_CONSTANT_OK = {C.ADD, C.SUB, C.MUL, C.DIV, C.MAXIMUM, C.MINIMUM, C.CONCATENATION, C.CONV_2D,
                C.FULLY_CONNECTED, C.LSTM, C.DEPTHWISE_CONV_2D}  # ConstantTensorCheck (2.3)
_TAIL_CONSTANT_OK = {C.CONCATENATION, C.LSTM, C.MUL}               # common tail (2.3)
_FILTERED = types(T.BOOL, T.FLOAT16, F16, B8, PC, T.TENSOR_QUANT16_SYMM,
                  T.TENSOR_QUANT16_ASYMM, T.TENSOR_QUANT8_SYMM)     # input-type filter (2.3)


def validator_checks(view: OperationView) -> str | None:
    """DimentionCheck, ConstantTensorCheck, ShareOperandCheck of op_validate (2.3)."""
    dims = _dims_reasons(view, first_only=True)
    if dims:
        return dims[0]
    if view.code not in _CONSTANT_OK and view.is_constant(0):
        return "reject operation due to its input[0] is contant tensor which is meaningless"
    if len(set(view.inputs)) != len(view.inputs):
        return "reject operation because its inputs shared same opearnd"
    return None


def tail_reasons(view: OperationView) -> list[str]:
    """The common tail of inline and default ops (2.3)."""
    out = []
    if view.code not in _TAIL_CONSTANT_OK and view.is_constant(0):
        out.append("reject op because its input[0] is constant tensor")
    bad = "reject op because its operand data type is not supported yet"
    out.extend(bad for k in range(view.num_inputs) if view.input_type(k) in _FILTERED)
    # the loop meant for the outputs re-checks inputs[i] (an upstream bug, 2.3)
    out.extend(bad for k in range(len(view.outputs))
               if k < view.num_inputs and view.input_type(k) in _FILTERED)
    return out + _dims_reasons(view, first_only=False)


def _const_int(view: OperationView, k: int, default=None):
    v = view.constant(k)
    return default if v is None else int(v)


def _kernel_hw(view: OperationView, k: int = 1) -> int:
    d = view.input_shape(k)
    return d[1] * d[2] if len(d) == 4 else 0


def output_like_input(label: str):
    def check(view: OperationView):
        if view.output_type(0) != view.input_type(0):
            return f"reject {label} because input data type not support"
        return None
    return check


def kernel_bias_constant(label: str, both_or_neither: bool):
    def check(view: OperationView):
        k, b = view.is_constant(1), view.is_constant(2)
        if both_or_neither and k != b:
            return f"reject {label} because kernel and bias not satisfy constant rule"
        if not both_or_neither and not (k and b):
            return f"reject {label} because kernel or bias is not constant"
        return None
    return check


def kernel_size_limit(label: str):
    def check(view: OperationView):
        if _kernel_hw(view) > 6400:
            return f"reject {label} because kernel size > 6400"
        return None
    return check


def conv_shares_kernel(view: OperationView):
    if view.inputs[0] == view.inputs[1]:
        return "reject CONVOLUTION_2D because input and kernel share a same tensor"
    return None


def depthwise_kernel_dim0(view: OperationView):
    d = view.input_shape(1)
    if d and d[0] != 1:
        return "reject Depthwise_conv_2d because kernel[0] != 1"
    return None


def transpose_conv_batch(view: OperationView):
    d = view.input_shape(0)
    if d and d[0] != 1:
        return "reject TRANSPOSE_CONV_2D because batch > 1 is not supported"
    return None


def reshape_single_element(view: OperationView):
    n = 1
    for d in view.input_shape(0):
        n *= d
    if n <= 1:
        return "reject RESHAPE because its input has at most one element"
    return None


def mean_axis_constant(view: OperationView):
    if not view.is_constant(1):
        return "reject MEAN because axis tensor is not constant"
    return None


def unary_rank4(view: OperationView):
    if len(view.input_shape(0)) > 4:
        return f"reject {view.name} because elementwise unary op rank > 4"
    return None


def resize_flags_pre_12_1(view: OperationView):
    if view.num_inputs > 4:  # align_corners / half_pixel_centers are not in the spec (2.4)
        return (f"reject {view.name} because align_corners/half_pixel_centers are not in its "
                f"signature")
    return None


# inline conditions (2.4)
def eltwise_conditions(view: OperationView) -> str | None:
    label = "ADD|SUB|MUL|DIV"
    if view.input_type(0) == I32:
        return f"reject {label} because input0 is TENSOR_INT32"
    if view.is_constant(0) and view.is_constant(1):
        return f"reject {label} because all input tensor is constant"
    fuse = _const_int(view, 2) if view.num_inputs > 2 else 0
    if fuse is None or not 0 <= fuse <= 3:
        return f"reject {label} because fused activation is not a constant <= 3"
    a, b = view.input_shape(0), view.input_shape(1)
    if len(a) == len(b) and any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
        return f"reject {label} because inputs shape is invalidated"
    return None


def softmax_condition(view):
    return "reject SOFTMAX because input tensor is constant" if view.is_constant(0) else None


def tanh_condition(view):
    if view.input_type(0) != F32:
        return "reject TANH because only support input_type = FLOAT32 tensor"
    return None


def rnn_condition(view):
    if _const_int(view, 5, -1) not in (1, 2, 3):
        return "reject RNN because fuseCode not support "
    return None


def lstm_condition(view):
    return "reject LSTM because New Spec in 1.2 not enabled" if view.num_inputs > 23 else None


def svdf_condition(view):
    rank = _const_int(view, 5)
    return "reject SVDF because rankd <= 2 not support" if rank is not None and rank <= 2 else None


def hashtable_condition(view):
    if len(view.input_shape(2)) != 2:
        return "reject HASHTABLE_LOOPUP until we support value tensor other than 2D"
    return None


def pad_conditions(view):
    pads = view.constant(1)
    if pads is None:
        return "reject PAD because paddings are not constant"
    if len(view.input_shape(0)) != 4:
        return "reject Pad because dimSize !=4"
    if int(pads[0].sum()) or int(pads[3].sum()):
        return "reject PAD because pad value for 3rd or 0rd/3rd dimensions"
    return None


def transpose_conditions(view):
    if view.num_inputs < 2:
        return "reject TRANSPOSE because no perm vetor provided"
    if view.input(1).lifetime == OperandLifeTime.SUBGRAPH_INPUT:
        return "reject TRANSPOSE because permute not supported as an input "
    perm = view.constant(1)
    if perm is None:
        return "reject TRANSPOSE because perm is not constant"
    if len(perm) > 4 or int(perm[0]) != 0:
        return "reject TRANSPOSE because >=4D or transposed on Batch not supported"
    return None


# -- the per-op table (2.4, tag android-14.0.0_1.0.0) ------------------------------------------------
S24 = "npu-drivers.md 2.4"
ALL4 = types(F32, F16, U8, I8)
CONV_PAIRS = frozenset({(F32, F32), (U8, U8), (I8, I8), (U8, PC), (I8, PC)})
DW_PAIRS = CONV_PAIRS | {(F16, F16)}


def _v(ts=None, checks=(), label="", **kw) -> OpRule:
    return OpRule(VALIDATOR, types=ts, checks=tuple(checks), label=label, source=S24, **kw)


def _rej(reason: str = "") -> OpRule:
    return OpRule(REJECT, reason=reason, source=S24)


def _base_table() -> dict:
    tbl = {
        C.AVERAGE_POOL_2D: _v(ALL4), C.MAX_POOL_2D: _v(ALL4), C.L2_POOL_2D: _v(types(F32, F16)),
        C.CONV_2D: _v(pairs=CONV_PAIRS, label="CONVOLUTION_2D", checks=(
            output_like_input("CONVOLUTION_2D"), conv_shares_kernel,
            kernel_bias_constant("CONVOLUTION_2D", True), kernel_size_limit("CONVOLUTION_2D"))),
        C.DEPTHWISE_CONV_2D: _v(pairs=DW_PAIRS, label="Depthwise_conv_2d", checks=(
            depthwise_kernel_dim0, kernel_bias_constant("Depthwise_conv_2d", False),
            kernel_size_limit("Depthwise_conv_2d"))),
        C.GROUPED_CONV_2D: _v(pairs=frozenset({(F32, F32), (F16, F16), (U8, U8), (I8, I8)})),
        C.TRANSPOSE_CONV_2D: _v(pairs=DW_PAIRS, checks=(
            transpose_conv_batch, kernel_bias_constant("TRANSPOSE_CONV_2D", False),
            kernel_size_limit("TRANSPOSE_CONV_2D"))),
        C.HARD_SWISH: _v(ALL4), C.ELU: _v(types(F32, F16)), C.PRELU: _v(ALL4),
        C.RESHAPE: _v(ALL4, checks=(reshape_single_element,)), C.SQUEEZE: _v(ALL4),
        C.STRIDED_SLICE: _v(types(F32, U8, I8)),
        C.MEAN: _v(ALL4, checks=(mean_axis_constant,)),
        C.REDUCE_MAX: _v(ALL4), C.REDUCE_MIN: _v(ALL4), C.REDUCE_SUM: _v(types(F32)),
        C.REDUCE_PROD: _v(types(F32, F16)), C.REDUCE_ALL: _v(types(B8)),
        C.REDUCE_ANY: _v(types(B8)),
        C.ARGMAX: _v(types(F32, F16, I32, U8, I8), outputs=types(I32)),
        C.ARGMIN: _v(types(F32, F16, I32, U8, I8), outputs=types(I32)),
        C.RESIZE_BILINEAR: _v(ALL4), C.RESIZE_NEAREST_NEIGHBOR: _v(ALL4),
        C.MAXIMUM: _v(ALL4), C.MINIMUM: _v(ALL4), C.SELECT: _v(ALL4, type_index=1),
        C.CHANNEL_SHUFFLE: _v(ALL4),
        C.LOGICAL_AND: _v(types(B8)), C.LOGICAL_OR: _v(types(B8)), C.LOGICAL_NOT: _v(types(B8)),
        C.SPACE_TO_DEPTH: _v(ALL4), C.DEPTH_TO_SPACE: _v(ALL4), C.SPACE_TO_BATCH_ND: _v(ALL4),
        C.BATCH_TO_SPACE_ND: _v(ALL4),
        C.QUANTIZE: _v(types(F32, F16)),
        C.POW: _v(types(F32, F16)),
        C.LOG_SOFTMAX: _v(types(F32)), C.INSTANCE_NORMALIZATION: _v(types(F32)),
        C.RANDOM_MULTINOMIAL: _v(types(F32)),
        C.ROI_ALIGN: _v(types(F32, F16)), C.HEATMAP_MAX_KEYPOINT: _v(types(F32, F16)),
        C.AXIS_ALIGNED_BBOX_TRANSFORM: _v(types(F32, F16)),
        C.UNIDIRECTIONAL_SEQUENCE_RNN: _v(types(F32, F16)),
    }
    for code in (C.SLICE, C.SPLIT, C.GATHER, C.EXPAND_DIMS, C.CAST):
        tbl[code] = _v(types(F32, F16, I32, U8, I8))
    for code in (C.LESS, C.LESS_EQUAL, C.EQUAL, C.GREATER, C.GREATER_EQUAL, C.NOT_EQUAL):
        tbl[code] = _v(types(F32, F16, I32, U8, I8), outputs=types(B8))
    for code in (C.ABS, C.SIN, C.EXP, C.SQRT, C.RSQRT):
        tbl[code] = _v(types(F32, F16))
    tbl[C.LOG] = _v(types(F32))
    tbl[C.NEG] = _v(types(F32, F16, I32))
    # inline ops: own conditions, then the tail (2.3, 2.4)
    for code in (C.ADD, C.SUB, C.MUL, C.DIV):
        tbl[code] = OpRule(INLINE, checks=(eltwise_conditions,), source=S24)
    for code, fn in ((C.SOFTMAX, softmax_condition), (C.TANH, tanh_condition),
                     (C.RNN, rnn_condition), (C.LSTM, lstm_condition),
                     (C.SVDF, svdf_condition), (C.HASHTABLE_LOOKUP, hashtable_condition),
                     (C.PAD, pad_conditions), (C.TRANSPOSE, transpose_conditions)):
        tbl[code] = OpRule(INLINE, checks=(fn,), source=S24)
    # default ops: no case in the switch, only the tail (2.3)
    for code in (C.CONCATENATION, C.DEQUANTIZE, C.EMBEDDING_LOOKUP, C.FLOOR, C.FULLY_CONNECTED,
                 C.L2_NORMALIZATION, C.LOCAL_RESPONSE_NORMALIZATION, C.LOGISTIC, C.RELU, C.RELU1,
                 C.RELU6, C.QUANTIZED_LSTM):
        tbl[code] = OpRule(DEFAULT, source="npu-drivers.md 2.3")
    # always rejected (2.4)
    tbl[C.LSH_PROJECTION] = _rej("rejcet LSH_PROJECTION because only SW implement")
    tbl[C.UNIDIRECTIONAL_SEQUENCE_LSTM] = _rej("reject UNIDIRECTIONAL_SEQUENCE_LSTM ")
    tbl[C.BIDIRECTIONAL_SEQUENCE_LSTM] = _rej("reject BIDIRECTIONAL_SEQUENCE_LSTM")
    for code in (C.BIDIRECTIONAL_SEQUENCE_RNN, C.GENERATE_PROPOSALS, C.DETECTION_POSTPROCESSING,
                 C.TOPK_V2, C.BOX_WITH_NMS_LIMIT, C.PAD_V2, C.QUANTIZED_16BIT_LSTM, C.ROI_POOLING,
                 C.TILE, C.IF, C.WHILE, C.FILL, C.RANK):
        tbl[code] = _rej()  # the HAL refuses these without a log line; nnsim's wording
    return tbl


@lru_cache(maxsize=16)
def vsi_table(bsp: tuple) -> dict:
    """The support table of one BSP (2.4 plus the version quirks of 2.5 / 10.2)."""
    tbl = _base_table()
    if bsp >= BSP_UNARY_RANK4:
        for code in (C.ABS, C.SIN, C.EXP, C.SQRT, C.RSQRT, C.LOG, C.NEG):
            r = tbl[code]
            tbl[code] = OpRule(VALIDATOR, types=r.types, checks=(unary_rank4,), source=r.source)
    for code in (C.RESIZE_BILINEAR, C.RESIZE_NEAREST_NEIGHBOR):
        if bsp < BSP_RESIZE_12_1:  # up to android-12.0.0_2.0.0 the spec has no flags (2.4)
            tbl[code] = _v(ALL4, checks=(resize_flags_pre_12_1,))
    if bsp >= BSP_RESIZE_12_1:  # commit "Disable Resize-Nearest-Neighbor" (2.4, 2.5)
        tbl[C.RESIZE_NEAREST_NEIGHBOR] = _rej(
            "reject RESIZE_NEAREST_NEIGHBOR because it is disabled in this BSP")
    if bsp >= BSP_NO_UNI_RNN:  # "Disable uni-direction rnn" (2.5)
        tbl[C.UNIDIRECTIONAL_SEQUENCE_RNN] = _rej(
            "reject UNIDIRECTIONAL_SEQUENCE_RNN because its signature is disabled")
    return tbl


# -- MODEL_BLOCK_LEVEL (2.1, 2.3) ------------------------------------------------------------------
SIZE_CLASSES = ("XXL", "XL", "L", "M", "S", "XS")  # level n blocks the first n classes (2.5)
WEIGHT_MD5_OPS = (C.CONV_2D, C.FULLY_CONNECTED)


def weight_md5(model, op_index: int) -> str | None:
    """MD5 (upper-case hex) of the first 512 bytes of a CONV_2D / FULLY_CONNECTED weight."""
    op = model.operations[op_index]
    if op.type not in WEIGHT_MD5_OPS or len(op.inputs) < 2:
        return None
    w = model.operands[op.inputs[1]]
    if w.value is None:
        return None
    return hashlib.md5(bytes(w.value)[:512]).hexdigest().upper()


def block_entries_for(model, size: str = "XS", name: str = "") -> list[dict]:
    """Block-list entries matching ``model`` (to configure MODEL_BLOCK_LEVEL experiments)."""
    out = []
    for i, op in enumerate(model.operations):
        md5 = weight_md5(model, i)
        if md5:
            out.append({"md5": md5, "size": size, "name": name,
                        "shape": list(model.operands[op.inputs[1]].dimensions)})
    return out


# -- the HAL build: BSP -> HAL version, feature level, tag, table (2.1, 2.5, 10.2) -------------------
NAME = "vsi-npu"                                     # 2.1
DEFAULT_BOARD = "imx8mp"
PROPERTIES = {
    PROP_BSP: (DEFAULT_BSP, "vsi-npu BSP tag (nn-imx): < android-11.0.0_2.0.0 = HAL 1.2, "
                            "< android-12.1.0_1.0.0 = resize flags refused, >= it "
                            "RESIZE_NEAREST_NEIGHBOR refused"),
    PROP_DISABLE_FLOAT: ("0", "vsi-npu: non-zero drops float32/float16 from the "
                              "capabilities (FLT_MAX)"),
    PROP_BLOCK_LEVEL: ("0", "vsi-npu: 1..6 refuses whole models whose CONV/FC weight MD5 "
                            "is in the block list (XXL..XS); 0 = off"),
    PROP_OP_BLOCK_LIST: ("", "vsi-npu: file whose first line lists operation codes to "
                             "refuse, each followed by ','"),
    PROP_MODEL_BLOCK_LIST: ("", "nnsim: JSON file of MODEL_BLOCK_LEVEL entries "
                                "[{md5, size, name, shape}] added to the built-in list"),
}
register_properties(PROPERTIES)   # once, at import: listed by `nnsim props`

# The built-in MD5 lists of WeightMd5CheckingConfig.h are not reproduced; configure entries
# with ``model_block_list`` or vendor.nnsim.vsi.model_block_list.
BUILTIN_BLOCK_LIST: tuple = ()


def _service_tag(bsp_version: tuple) -> str:
    """The HAL service's logcat tag for a BSP version (HAL 1.3 from BSP_HAL13, else 1.2)."""
    hal = "1.3" if bsp_version >= BSP_HAL13 else "1.2"
    return f"android.hardware.neuralnetworks@{hal}-service-vsi-npu-server"


class VsiHal:
    """The VeriSilicon NNHAL build a driver runs: its BSP tag (fixed, or the property read at
    every use) decides the HAL version, feature level, logcat tag and support table. Also the
    HAL's block lists. A driver built on it reads ``bsp``, ``hal_version``, ``support_table``
    and ``model_block_list`` as its own attributes (``SimulatedDriver.vendor``)."""

    def __init__(self, bsp: str | None = None, model_block_list=None, log_tag: str | None = None):
        self._bsp_override = bsp
        self._log_tag = log_tag
        self._bad_bsp_logged: set = set()
        self.model_block_list = list(model_block_list or ())

    @property
    def bsp(self) -> str:
        return self._bsp_override or getprop(PROP_BSP) or DEFAULT_BSP

    def bsp_version(self) -> tuple:
        try:
            return parse_bsp(self.bsp)
        except ValueError as e:
            default = parse_bsp(DEFAULT_BSP)
            if self.bsp not in self._bad_bsp_logged:   # once per bad value, not per query
                self._bad_bsp_logged.add(self.bsp)
                # the tag of the default BSP's HAL: self.log_tag would parse the bad tag again
                vlog.log_error(self._log_tag or _service_tag(default), f"{e}; using {DEFAULT_BSP}")
            return default

    @property
    def hal_version(self) -> str:
        return "1.3" if self.bsp_version() >= BSP_HAL13 else "1.2"

    @property
    def feature_level(self) -> int:
        return FeatureLevel.FEATURE_LEVEL_4 if self.hal_version == "1.3" \
            else FeatureLevel.FEATURE_LEVEL_3

    @property
    def log_tag(self) -> str:
        if self._log_tag:
            return self._log_tag
        return _service_tag(self.bsp_version())

    @property
    def support_table(self) -> dict:
        return vsi_table(self.bsp_version())

    def frame(self) -> str:
        """The HAL function the support query is logged under (2.3)."""
        return f"getSupportedOperations_{self.hal_version.replace('.', '_')}"

    def blocked_ops(self) -> set:
        """``IsOpBlockedByBlacklist``: codes on the file's first line; only numbers followed by
        a ',' count (the HAL's parser)."""
        path = getprop(PROP_OP_BLOCK_LIST)
        if not path:
            return set()
        try:
            with open(device_path(path)) as f:
                line = f.readline()
        except OSError:
            vlog.log_info(self.log_tag, f"can not open blacklist file from -> {path}")
            return set()
        parts = line.strip().split(",")
        out = set()
        for tok in parts[:-1]:
            try:
                out.add(int(tok))
            except ValueError:
                pass
        return out

    def block_list(self) -> list[dict]:
        entries = list(BUILTIN_BLOCK_LIST) + self.model_block_list
        path = getprop(PROP_MODEL_BLOCK_LIST)
        if path:
            try:
                entries += json.loads(device_path(path).read_text())
            except (OSError, ValueError) as e:
                vlog.log_error(self.log_tag, f"cannot read the model block list {path}: {e}")
        return entries

    def model_veto(self, model) -> str | None:
        """``MODEL_BLOCK_LEVEL``: a reason to refuse the whole model, or None (2.1, 2.3)."""
        level = getprop_int(PROP_BLOCK_LEVEL, 0)
        if level <= 0:
            return None
        if level > 6:
            vlog.log_error(self.log_tag, "MODEL_BLOCK_LEVEL should be any value of "
                                         "{0, 1, 2, 3, 4, 5, 6}")
            return None
        active = {"D", *SIZE_CLASSES[:level]}  # the D list is always checked (2.1)
        entries = [e for e in self.block_list() if e.get("size", "D") in active]
        for i in range(len(model.operations)):
            md5 = weight_md5(model, i)
            if md5 is None:
                continue
            shape = list(model.operands[model.operations[i].inputs[1]].dimensions)
            for e in entries:
                if e["md5"].upper() == md5 and e.get("shape") in (None, shape):
                    vlog.log_info(self.log_tag, "Weight MD5 matched, reject the whole model.")
                    return (f"reject the whole model because the weight MD5 of operation {i} "
                            f"matches {e.get('name') or md5} (MODEL_BLOCK_LEVEL={level})")
        return None


# -- the rule set and the device (2.1-2.5) --------------------------------------------------------
def vsi_rules(hal: VsiHal, block_lists: bool = True, disabled=None) -> SupportRules:
    """The VeriSilicon decision procedure of ``getSupportedOperations_1_3`` (2.3) over the BSP's
    table; ``block_lists``: with the debug op block list and MODEL_BLOCK_LEVEL (vsi-npu's
    knobs, not SyNAP's); ``disabled``: see :class:`~nnsim.drivers.rules.SupportRules`."""
    return SupportRules(disabled=disabled,
        table=lambda: hal.support_table, missing_reason="reject {op} because it is not supported",
        validator_checks=validator_checks, tail=tail_reasons, log_frame=hal.frame,
        blocked_ops=hal.blocked_ops if block_lists else None,
        blocked_reason=" reject op because it blocked by debug blacklist file",
        veto=hal.model_veto if block_lists else None)


RELAXED = PerformanceInfo(0.9, 0.9)                                   # 2.2
NO_CONTROL_FLOW = PerformanceInfo(FLT_MAX, FLT_MAX)                   # 2.2 (IF, WHILE)


def vsi_capabilities(props: Props) -> Capabilities:
    """2.2: {0.9, 0.9} for uint8, bool8, int32 and (unless DISABLE_FLOAT_FEATURE) float32 and
    float16; everything else, TENSOR_QUANT8_ASYMM_SIGNED included, FLT_MAX."""
    perf = PerformanceInfo(0.9, 0.9)
    table = {int(U8): perf, int(B8): perf, int(I32): perf}
    if not props.get_int(PROP_DISABLE_FLOAT, 0):
        table[int(F32)] = perf
        table[int(F16)] = perf
    return table_capabilities(table, RELAXED, NO_CONTROL_FLOW, NO_CONTROL_FLOW)


def vsi_npu(board: str | None = None, bsp: str | None = None,
            model_block_list=None) -> SimulatedDriver:
    """The vsi-npu HAL (identity 2.1, capabilities 2.2, support 2.3-2.4, quirks 2.5, 10.2) with
    the timing of ``board`` (default imx8mp); ``bsp`` fixes the BSP tag (default: the
    property)."""
    board = board or DEFAULT_BOARD
    hal = VsiHal(bsp, model_block_list)
    return SimulatedDriver(
        NAME, version_string=VERSION_STRING, number_of_cache_files_needed=(1, 1),   # 2.1
        feature_level=lambda: hal.feature_level, log_tag=lambda: hal.log_tag,
        rules=vsi_rules(hal), capabilities=vsi_capabilities,
        timing=get_board(board).timing(NAME), board=board, vendor=hal)


VsiNpuDriver = vsi_npu   # the name earlier code and tests construct it by
