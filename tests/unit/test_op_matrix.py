"""The op matrix agrees with every registry it reads, and has no hole that is not explained."""
from __future__ import annotations

import numpy as np

from nnsim import opmatrix
from nnsim.drivers import timing
from nnsim.ops.registry import REGISTRY
from nnsim.tflite.builtins import BUILTINS, NNAPI_BACKED
from nnsim.tflite.convert import nodes
from nnsim.tflite.convert.mapping import tflite_to_nnapi
from nnsim.tflite.cpu_timing import node_stats
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding
from nnsim.tflite.validate import RULES
from nnsim.types import OperationCode as C


def test_no_unexplained_hole():
    holes = opmatrix.holes()
    assert not holes, "holes in the op matrix (fix them or list them in opmatrix.GAPS " \
                      "with a reason):\n" + "\n".join(map(str, holes))


def test_every_gap_is_still_a_hole():
    real = {(layer, op) for layer, op, _ in opmatrix.holes(include_gaps=True)}
    stale = sorted(set(opmatrix.GAPS) - real)
    assert not stale, f"GAPS entries that are no longer holes: {stale}"


def test_mapping_covers_exactly_the_converter():
    assert set(tflite_to_nnapi()) == set(nodes.CONVERTIBLE)


def test_rows_read_the_registries():
    rows = {r.builtin: r for r in opmatrix.tflite_rows()}
    for b in B:
        if b == B.CUSTOM:
            continue
        row = rows[b.name]
        assert row.delegate == (b in RULES)
        assert row.cpu == ("dedicated" if b in BUILTINS else "nnapi" if b in NNAPI_BACKED else "")
    nn = {r.code: r for r in opmatrix.nnapi_rows()}
    assert len(nn) == len(C)
    for code in C:
        assert nn[code.name].spec == (code in REGISTRY)
    # spot checks against the driver tables (npu-drivers.md 2.4)
    assert nn["CONV_2D"].vsi_npu == "validator" and nn["TILE"].vsi_npu == "reject"
    assert nn["CONV_2D"].timing == "conv"
    assert ("conv", True) in nn["CONV_2D"].kernels


def test_lowered_nodes_use_only_the_mapped_operations():
    """A one-node model per mapped builtin family, lowered by the delegate's converter: every
    NNAPI operation it emits is listed for that builtin."""
    from nnsim.tflite.builtins.nnapi_backed import NnapiBacked
    from nnsim.tflite.builtins._base import Node
    from tests.tflite.test_builtins import T, build
    from nnsim.tflite import options as O
    from nnsim.tflite.reader import read_model
    cases = [
        (B.SQUARED_DIFFERENCE, [T((2, 3)), T((2, 3))], [T((2, 3))], None),
        (B.SPLIT, [T((), np.int32, data=np.array(1, np.int32)), T((2, 4))],
         [T((2, 2)), T((2, 2))], O.SplitOptions(num_splits=2)),
        (B.TRANSPOSE_CONV, [T((4,), np.int32, data=np.array([1, 4, 4, 1], np.int32)),
                            T((1, 3, 3, 1), data=np.ones((1, 3, 3, 1), np.float32)),
                            T((1, 2, 2, 1))], [T((1, 4, 4, 1))],
         O.TransposeConvOptions(padding=Padding.SAME, stride_w=2, stride_h=2)),
    ]
    for op, ins, outs, options in cases:
        model = read_model(build(op, ins, outs, options))
        backed = NnapiBacked(Node(model, 0, 0))
        converted = next(iter(backed._built.values()))
        emitted = {C(o.type) for o in converted.nnapi_model.operations}
        assert emitted <= set(tflite_to_nnapi()[op]), (op.name, emitted)


def test_cpu_timing_uses_the_mapped_operation_and_the_shared_mac_count():
    """TRANSPOSE_CONV, ARG_MAX, SUM and PADV2 used to be costed as OEM_OPERATION (mapped by
    name); TRANSPOSE_CONV's MACs were counted per output instead of per input element."""
    from nnsim.tflite import options as O
    from nnsim.tflite.reader import read_model
    from tests.tflite.test_builtins import T, build
    blob = build(B.TRANSPOSE_CONV,
                 [T((4,), np.int32, data=np.array([1, 8, 8, 3], np.int32)),
                  T((3, 3, 3, 2), data=np.ones((3, 3, 3, 2), np.float32)), T((1, 4, 4, 2))],
                 [T((1, 8, 8, 3))],
                 O.TransposeConvOptions(padding=Padding.SAME, stride_w=2, stride_h=2))
    stats = node_stats(read_model(blob).subgraphs[0], 0)
    assert stats.code == C.TRANSPOSE_CONV_2D
    assert stats.macs == (1 * 4 * 4 * 2) * 3 * 3 * 3   # input elements x O x KH x KW
    assert stats.op_class == "conv"
    for builtin, code in ((B.ARG_MAX, C.ARGMAX), (B.SUM, C.REDUCE_SUM), (B.PADV2, C.PAD_V2)):
        assert opmatrix.nnapi_code_for_builtin(builtin) == code
    assert timing.op_class(C.TRANSPOSE_CONV_2D) == "conv"


def test_ops_command_prints_the_matrix(capsys):
    from nnsim.cli import main
    assert main(["ops"]) == 0
    text = capsys.readouterr().out
    assert "TFLite builtins (" in text and "NNAPI operations (" in text
    line = next(l for l in text.splitlines() if l.strip().startswith("RESIZE_NEAREST_NEIGHBOR ")
                and "RESIZE_NEAREST_NEIGHBOR" in l.split()[-1])
    assert "nnapi" in line.split()
