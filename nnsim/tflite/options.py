"""Builtin operator options: one frozen dataclass per ``tflite::BuiltinOptions`` table.

Options are parsed once, table-driven: each dataclass field carries its schema slot number and
scalar kind in its metadata (``_f(slot, kind, default)``), and ``parse_options`` /
``field_specs`` read that description for every class alike. The writer uses the same
description, so one declaration serves both directions. Defaults are the schema defaults, so
``Conv2DOptions()`` equals a table with no fields set.

Enum-valued fields hold TFLite's schema values as IntEnums from ``nnsim.tflite.schema``:
``padding`` is ``Padding`` (SAME = 0, VALID = 1: the reverse of NNAPI's PaddingCode), and
``fused_activation_function`` is ``ActivationFunctionType`` (NONE = 0, RELU = 1,
RELU_N1_TO_1 = 2, RELU6 = 3, TANH = 4, SIGN_BIT = 5). Converting them to NNAPI codes is the
converter's job, not the reader's.

An options table this module does not describe is returned as ``RawOptions(type_name, ...)``
rather than failing: the operator can still be read, listed and refused by the delegate.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import ClassVar, NamedTuple

from nnsim.tflite.schema import (
    ActivationFunctionType,
    BuiltinOptions,
    MalformedError,
    FullyConnectedOptionsWeightsFormat,
    MirrorPadMode,
    Padding,
    Table,
    TensorType,
)

Act = ActivationFunctionType


class FieldSpec(NamedTuple):
    """How one options field is stored: schema slot, scalar kind (struct code, or 'i[]'/'f[]'
    for int32/float32 vectors), schema default, and the IntEnum its value belongs to."""

    name: str
    slot: int
    kind: str
    default: object
    enum: type[IntEnum] | None


def _f(slot: int, kind: str, default=0):
    return field(default=default, metadata={"slot": slot, "kind": kind})


OPTIONS_TYPES: dict[int, type] = {}
_SPECS: dict[type, tuple[FieldSpec, ...]] = {}


def _register(options_type: BuiltinOptions):
    """Record ``cls`` as the dataclass for union tag ``options_type`` (explicit, per class)."""

    def wrap(cls):
        cls.options_type = options_type
        OPTIONS_TYPES[int(options_type)] = cls
        _SPECS[cls] = tuple(
            FieldSpec(f.name, f.metadata["slot"], f.metadata["kind"], f.default,
                      type(f.default) if isinstance(f.default, IntEnum) else None)
            for f in fields(cls))
        return cls

    return wrap


def field_specs(cls: type) -> tuple[FieldSpec, ...]:
    """The stored-field description of a registered options dataclass."""
    return _SPECS[cls]


@dataclass(frozen=True)
class RawOptions:
    """An options table nnsim does not describe. ``has_fields`` tells whether the table set
    any field: an empty table can still be written back exactly, a non-empty one cannot."""

    type_name: str
    type_code: int = 0
    has_fields: bool = False


@_register(BuiltinOptions.Conv2DOptions)
@dataclass(frozen=True)
class Conv2DOptions:
    padding: Padding = _f(0, "b", Padding.SAME)
    stride_w: int = _f(1, "i", 0)
    stride_h: int = _f(2, "i", 0)
    fused_activation_function: Act = _f(3, "b", Act.NONE)
    dilation_w_factor: int = _f(4, "i", 1)
    dilation_h_factor: int = _f(5, "i", 1)
    quantized_bias_type: TensorType = _f(6, "b", TensorType.FLOAT32)  # FLOAT32 = "not set"
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.DepthwiseConv2DOptions)
@dataclass(frozen=True)
class DepthwiseConv2DOptions:
    padding: Padding = _f(0, "b", Padding.SAME)
    stride_w: int = _f(1, "i", 0)
    stride_h: int = _f(2, "i", 0)
    depth_multiplier: int = _f(3, "i", 0)
    fused_activation_function: Act = _f(4, "b", Act.NONE)
    dilation_w_factor: int = _f(5, "i", 1)
    dilation_h_factor: int = _f(6, "i", 1)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.Pool2DOptions)
@dataclass(frozen=True)
class Pool2DOptions:
    """AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D."""

    padding: Padding = _f(0, "b", Padding.SAME)
    stride_w: int = _f(1, "i", 0)
    stride_h: int = _f(2, "i", 0)
    filter_width: int = _f(3, "i", 0)
    filter_height: int = _f(4, "i", 0)
    fused_activation_function: Act = _f(5, "b", Act.NONE)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.FullyConnectedOptions)
@dataclass(frozen=True)
class FullyConnectedOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    weights_format: FullyConnectedOptionsWeightsFormat = _f(
        1, "b", FullyConnectedOptionsWeightsFormat.DEFAULT)
    keep_num_dims: bool = _f(2, "?", False)
    asymmetric_quantize_inputs: bool = _f(3, "?", False)
    quantized_bias_type: TensorType = _f(4, "b", TensorType.FLOAT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.AddOptions)
@dataclass(frozen=True)
class AddOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    pot_scale_int16: bool = _f(1, "?", True)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SubOptions)
@dataclass(frozen=True)
class SubOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    pot_scale_int16: bool = _f(1, "?", True)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.MulOptions)
@dataclass(frozen=True)
class MulOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.DivOptions)
@dataclass(frozen=True)
class DivOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.L2NormOptions)
@dataclass(frozen=True)
class L2NormOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SoftmaxOptions)
@dataclass(frozen=True)
class SoftmaxOptions:
    beta: float = _f(0, "f", 0.0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ConcatenationOptions)
@dataclass(frozen=True)
class ConcatenationOptions:
    axis: int = _f(0, "i", 0)
    fused_activation_function: Act = _f(1, "b", Act.NONE)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ReshapeOptions)
@dataclass(frozen=True)
class ReshapeOptions:
    """``new_shape`` is None when the table has no vector (the shape comes from input 1)."""

    new_shape: tuple[int, ...] | None = _f(0, "i[]", None)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SqueezeOptions)
@dataclass(frozen=True)
class SqueezeOptions:
    squeeze_dims: tuple[int, ...] | None = _f(0, "i[]", None)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ResizeBilinearOptions)
@dataclass(frozen=True)
class ResizeBilinearOptions:
    # Slots 0 and 1 are the deprecated new_height / new_width.
    align_corners: bool = _f(2, "?", False)
    half_pixel_centers: bool = _f(3, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ResizeNearestNeighborOptions)
@dataclass(frozen=True)
class ResizeNearestNeighborOptions:
    align_corners: bool = _f(0, "?", False)
    half_pixel_centers: bool = _f(1, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ArgMaxOptions)
@dataclass(frozen=True)
class ArgMaxOptions:
    output_type: TensorType = _f(0, "b", TensorType.FLOAT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ArgMinOptions)
@dataclass(frozen=True)
class ArgMinOptions:
    output_type: TensorType = _f(0, "b", TensorType.FLOAT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ReducerOptions)
@dataclass(frozen=True)
class ReducerOptions:
    """MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY, REDUCE_ALL."""

    keep_dims: bool = _f(0, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.StridedSliceOptions)
@dataclass(frozen=True)
class StridedSliceOptions:
    begin_mask: int = _f(0, "i", 0)
    end_mask: int = _f(1, "i", 0)
    ellipsis_mask: int = _f(2, "i", 0)
    new_axis_mask: int = _f(3, "i", 0)
    shrink_axis_mask: int = _f(4, "i", 0)
    offset: bool = _f(5, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.GatherOptions)
@dataclass(frozen=True)
class GatherOptions:
    axis: int = _f(0, "i", 0)
    batch_dims: int = _f(1, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SplitOptions)
@dataclass(frozen=True)
class SplitOptions:
    num_splits: int = _f(0, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SplitVOptions)
@dataclass(frozen=True)
class SplitVOptions:
    num_splits: int = _f(0, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.PackOptions)
@dataclass(frozen=True)
class PackOptions:
    values_count: int = _f(0, "i", 0)
    axis: int = _f(1, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.UnpackOptions)
@dataclass(frozen=True)
class UnpackOptions:
    num: int = _f(0, "i", 0)
    axis: int = _f(1, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.LeakyReluOptions)
@dataclass(frozen=True)
class LeakyReluOptions:
    alpha: float = _f(0, "f", 0.0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.CastOptions)
@dataclass(frozen=True)
class CastOptions:
    in_data_type: TensorType = _f(0, "b", TensorType.FLOAT32)
    out_data_type: TensorType = _f(1, "b", TensorType.FLOAT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SpaceToDepthOptions)
@dataclass(frozen=True)
class SpaceToDepthOptions:
    block_size: int = _f(0, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.DepthToSpaceOptions)
@dataclass(frozen=True)
class DepthToSpaceOptions:
    block_size: int = _f(0, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.LocalResponseNormalizationOptions)
@dataclass(frozen=True)
class LocalResponseNormalizationOptions:
    radius: int = _f(0, "i", 0)
    bias: float = _f(1, "f", 0.0)
    alpha: float = _f(2, "f", 0.0)
    beta: float = _f(3, "f", 0.0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.TransposeConvOptions)
@dataclass(frozen=True)
class TransposeConvOptions:
    padding: Padding = _f(0, "b", Padding.SAME)
    stride_w: int = _f(1, "i", 0)
    stride_h: int = _f(2, "i", 0)
    fused_activation_function: Act = _f(3, "b", Act.NONE)
    quantized_bias_type: TensorType = _f(4, "b", TensorType.FLOAT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.BatchMatMulOptions)
@dataclass(frozen=True)
class BatchMatMulOptions:
    adj_x: bool = _f(0, "?", False)
    adj_y: bool = _f(1, "?", False)
    asymmetric_quantize_inputs: bool = _f(2, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.MirrorPadOptions)
@dataclass(frozen=True)
class MirrorPadOptions:
    mode: MirrorPadMode = _f(0, "b", MirrorPadMode.REFLECT)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.GeluOptions)
@dataclass(frozen=True)
class GeluOptions:
    approximate: bool = _f(0, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ShapeOptions)
@dataclass(frozen=True)
class ShapeOptions:
    out_type: TensorType = _f(0, "b", TensorType.FLOAT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.OneHotOptions)
@dataclass(frozen=True)
class OneHotOptions:
    axis: int = _f(0, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.CumsumOptions)
@dataclass(frozen=True)
class CumsumOptions:
    exclusive: bool = _f(0, "?", False)
    reverse: bool = _f(1, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.UniqueOptions)
@dataclass(frozen=True)
class UniqueOptions:
    idx_out_type: TensorType = _f(0, "b", TensorType.INT32)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.ReverseSequenceOptions)
@dataclass(frozen=True)
class ReverseSequenceOptions:
    seq_dim: int = _f(0, "i", 0)
    batch_dim: int = _f(1, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.Conv3DOptions)
@dataclass(frozen=True)
class Conv3DOptions:
    padding: Padding = _f(0, "b", Padding.SAME)
    stride_d: int = _f(1, "i", 0)
    stride_w: int = _f(2, "i", 0)
    stride_h: int = _f(3, "i", 0)
    fused_activation_function: Act = _f(4, "b", Act.NONE)
    dilation_d_factor: int = _f(5, "i", 1)
    dilation_w_factor: int = _f(6, "i", 1)
    dilation_h_factor: int = _f(7, "i", 1)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.FakeQuantOptions)
@dataclass(frozen=True)
class FakeQuantOptions:
    min: float = _f(0, "f", 0.0)
    max: float = _f(1, "f", 0.0)
    num_bits: int = _f(2, "i", 0)
    narrow_range: bool = _f(3, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.BucketizeOptions)
@dataclass(frozen=True)
class BucketizeOptions:
    boundaries: tuple[float, ...] | None = _f(0, "f[]", None)
    options_type: ClassVar[BuiltinOptions]


# -- control flow: the subgraphs IF / WHILE / CALL_ONCE run (indices into Model.subgraphs) ----
@_register(BuiltinOptions.IfOptions)
@dataclass(frozen=True)
class IfOptions:
    then_subgraph_index: int = _f(0, "i", 0)
    else_subgraph_index: int = _f(1, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.WhileOptions)
@dataclass(frozen=True)
class WhileOptions:
    cond_subgraph_index: int = _f(0, "i", 0)
    body_subgraph_index: int = _f(1, "i", 0)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.CallOnceOptions)
@dataclass(frozen=True)
class CallOnceOptions:
    init_subgraph_index: int = _f(0, "i", 0)
    options_type: ClassVar[BuiltinOptions]


# -- recurrent operators (LSTM, RNN, SVDF) ------------------------------------------------------
@_register(BuiltinOptions.LSTMOptions)
@dataclass(frozen=True)
class LSTMOptions:
    """LSTM. ``kernel_type``: LSTMKernelType (0 FULL, 1 BASIC)."""

    fused_activation_function: Act = _f(0, "b", Act.NONE)
    cell_clip: float = _f(1, "f", 0.0)
    proj_clip: float = _f(2, "f", 0.0)
    kernel_type: int = _f(3, "b", 0)
    asymmetric_quantize_inputs: bool = _f(4, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.UnidirectionalSequenceLSTMOptions)
@dataclass(frozen=True)
class UnidirectionalSequenceLSTMOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    cell_clip: float = _f(1, "f", 0.0)
    proj_clip: float = _f(2, "f", 0.0)
    time_major: bool = _f(3, "?", False)
    asymmetric_quantize_inputs: bool = _f(4, "?", False)
    diagonal_recurrent_tensors: bool = _f(5, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.BidirectionalSequenceLSTMOptions)
@dataclass(frozen=True)
class BidirectionalSequenceLSTMOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    cell_clip: float = _f(1, "f", 0.0)
    proj_clip: float = _f(2, "f", 0.0)
    merge_outputs: bool = _f(3, "?", False)
    time_major: bool = _f(4, "?", True)
    asymmetric_quantize_inputs: bool = _f(5, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.RNNOptions)
@dataclass(frozen=True)
class RNNOptions:
    fused_activation_function: Act = _f(0, "b", Act.NONE)
    asymmetric_quantize_inputs: bool = _f(1, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SequenceRNNOptions)
@dataclass(frozen=True)
class SequenceRNNOptions:
    time_major: bool = _f(0, "?", False)
    fused_activation_function: Act = _f(1, "b", Act.NONE)
    asymmetric_quantize_inputs: bool = _f(2, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.BidirectionalSequenceRNNOptions)
@dataclass(frozen=True)
class BidirectionalSequenceRNNOptions:
    time_major: bool = _f(0, "?", False)
    fused_activation_function: Act = _f(1, "b", Act.NONE)
    merge_outputs: bool = _f(2, "?", False)
    asymmetric_quantize_inputs: bool = _f(3, "?", False)
    options_type: ClassVar[BuiltinOptions]


@_register(BuiltinOptions.SVDFOptions)
@dataclass(frozen=True)
class SVDFOptions:
    rank: int = _f(0, "i", 0)
    fused_activation_function: Act = _f(1, "b", Act.NONE)
    asymmetric_quantize_inputs: bool = _f(2, "?", False)
    options_type: ClassVar[BuiltinOptions]


@dataclass(frozen=True)
class _NoFields:
    """Base of the options tables that have no fields: only the union tag is stored."""

    options_type: ClassVar[BuiltinOptions]


def _no_fields(name: str) -> type:
    cls = type(name, (_NoFields,), {"__doc__": f"``{name}``: no fields.",
                                    "__module__": __name__, "__qualname__": name})
    return _register(BuiltinOptions[name])(cls)


PadOptions = _no_fields("PadOptions")
PadV2Options = _no_fields("PadV2Options")
TransposeOptions = _no_fields("TransposeOptions")
HardSwishOptions = _no_fields("HardSwishOptions")
QuantizeOptions = _no_fields("QuantizeOptions")
DequantizeOptions = _no_fields("DequantizeOptions")
ExpOptions = _no_fields("ExpOptions")
LogSoftmaxOptions = _no_fields("LogSoftmaxOptions")
SliceOptions = _no_fields("SliceOptions")
TileOptions = _no_fields("TileOptions")
ExpandDimsOptions = _no_fields("ExpandDimsOptions")
MaximumMinimumOptions = _no_fields("MaximumMinimumOptions")
NegOptions = _no_fields("NegOptions")
AbsOptions = _no_fields("AbsOptions")
SelectOptions = _no_fields("SelectOptions")
SelectV2Options = _no_fields("SelectV2Options")
EqualOptions = _no_fields("EqualOptions")
NotEqualOptions = _no_fields("NotEqualOptions")
LessOptions = _no_fields("LessOptions")
LessEqualOptions = _no_fields("LessEqualOptions")
GreaterOptions = _no_fields("GreaterOptions")
GreaterEqualOptions = _no_fields("GreaterEqualOptions")
PowOptions = _no_fields("PowOptions")
SquaredDifferenceOptions = _no_fields("SquaredDifferenceOptions")
SquareOptions = _no_fields("SquareOptions")
FloorDivOptions = _no_fields("FloorDivOptions")
FloorModOptions = _no_fields("FloorModOptions")
RankOptions = _no_fields("RankOptions")
ZerosLikeOptions = _no_fields("ZerosLikeOptions")
FillOptions = _no_fields("FillOptions")
RangeOptions = _no_fields("RangeOptions")
BroadcastToOptions = _no_fields("BroadcastToOptions")
SignOptions = _no_fields("SignOptions")
CosOptions = _no_fields("CosOptions")
WhereOptions = _no_fields("WhereOptions")
LogicalAndOptions = _no_fields("LogicalAndOptions")
LogicalOrOptions = _no_fields("LogicalOrOptions")
LogicalNotOptions = _no_fields("LogicalNotOptions")
AddNOptions = _no_fields("AddNOptions")
ReverseV2Options = _no_fields("ReverseV2Options")
GatherNdOptions = _no_fields("GatherNdOptions")
SpaceToBatchNDOptions = _no_fields("SpaceToBatchNDOptions")
BatchToSpaceNDOptions = _no_fields("BatchToSpaceNDOptions")
TopKV2Options = _no_fields("TopKV2Options")
ScatterNdOptions = _no_fields("ScatterNdOptions")
MatrixDiagOptions = _no_fields("MatrixDiagOptions")
MatrixSetDiagOptions = _no_fields("MatrixSetDiagOptions")
DensifyOptions = _no_fields("DensifyOptions")
SegmentSumOptions = _no_fields("SegmentSumOptions")
DynamicUpdateSliceOptions = _no_fields("DynamicUpdateSliceOptions")
NonMaxSuppressionV4Options = _no_fields("NonMaxSuppressionV4Options")
NonMaxSuppressionV5Options = _no_fields("NonMaxSuppressionV5Options")
UnsortedSegmentProdOptions = _no_fields("UnsortedSegmentProdOptions")
UnsortedSegmentMaxOptions = _no_fields("UnsortedSegmentMaxOptions")
UnsortedSegmentMinOptions = _no_fields("UnsortedSegmentMinOptions")
UnsortedSegmentSumOptions = _no_fields("UnsortedSegmentSumOptions")


def _read_field(table: Table, spec: FieldSpec):
    if spec.kind == "i[]":
        return table.ints(spec.slot, "i")
    if spec.kind == "f[]":
        return table.ints(spec.slot, "f")
    value = table.scalar(spec.slot, spec.kind, spec.default)
    if spec.enum is None:
        return value
    try:
        return spec.enum(value)
    except ValueError:
        raise MalformedError(f"invalid {spec.name} value {value} (not a "
                              f"{spec.enum.__name__})", table.pos) from None


def parse_options(type_code: int, table: Table | None):
    """Decode the options table of union tag ``type_code``.

    Returns None for tag NONE, the registered dataclass (schema defaults for absent fields,
    and for an absent table), or ``RawOptions`` for a tag nnsim does not describe. Raises
    MalformedError for an unknown tag or a field outside the file or outside its enum.
    """
    if type_code == BuiltinOptions.NONE:
        return None
    cls = OPTIONS_TYPES.get(type_code)
    if cls is None:
        try:
            name = BuiltinOptions(type_code).name
        except ValueError:
            raise MalformedError(f"unknown builtin options type {type_code}") from None
        has_fields = table is not None and any(table.has(s) for s in range(64))
        return RawOptions(name, type_code, has_fields)
    if table is None:
        return cls()
    return cls(**{spec.name: _read_field(table, spec) for spec in _SPECS[cls]})
