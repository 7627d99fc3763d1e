"""Every described options table: written by nnsim, read back by nnsim and, independently, by
the ``tflite`` package's generated readers (which pins every slot number to schema.fbs)."""
from __future__ import annotations

from dataclasses import fields

import flatbuffers
import numpy as np
import pytest
import tflite

from nnsim.tflite.options import OPTIONS_TYPES, RawOptions, field_specs, parse_options
from nnsim.tflite.reader import read_model
from nnsim.tflite.schema import BuiltinOperator, BuiltinOptions, Table, TensorType
from nnsim.tflite.writer import ModelWriter


def _non_default(spec):
    """A value different from the schema default, exactly representable in its field."""
    if spec.enum is not None:
        members = list(spec.enum)
        return members[(members.index(spec.default) + 1) % len(members)]
    if spec.kind == "?":
        return not spec.default
    if spec.kind == "f":
        return 0.5 + spec.slot
    if spec.kind == "i[]":
        return (1, -2, 3 + spec.slot)
    if spec.kind == "f[]":
        return (0.25, 1.5)
    return spec.default + 3 + spec.slot if spec.kind != "b" else spec.default + 1


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _write(options) -> bytes:
    w = ModelWriter()
    x = w.add_tensor("x", (1,), TensorType.FLOAT32)
    w.add_operator(BuiltinOperator.ADD, [x], [x], options)
    return w.finish()


@pytest.mark.parametrize("cls", list(OPTIONS_TYPES.values()), ids=lambda c: c.__name__)
def test_options_agree_with_generated_schema(cls):
    specs = field_specs(cls)
    assert [s.name for s in specs] == [f.name for f in fields(cls)]
    options = cls(**{s.name: _non_default(s) for s in specs})
    blob = _write(options)
    assert read_model(blob).main.operators[0].options == options

    op = tflite.Model.GetRootAs(blob).Subgraphs(0).Operators(0)
    assert op.BuiltinOptionsType() == cls.options_type
    generated = getattr(tflite, BuiltinOptions(cls.options_type).name)()
    table = op.BuiltinOptions()
    generated.Init(table.Bytes, table.Pos)
    for spec in specs:
        expected = getattr(options, spec.name)
        if spec.kind.endswith("[]"):
            got = tuple(getattr(generated, _camel(spec.name) + "AsNumpy")().tolist())
        else:
            got = getattr(generated, _camel(spec.name))()
        assert got == expected, spec.name


def test_defaults_are_schema_defaults():
    for cls in OPTIONS_TYPES.values():
        blob = _write(cls())
        assert read_model(blob).main.operators[0].options == cls()


def test_unknown_table_with_fields_is_raw():
    b = flatbuffers.Builder(0)
    tflite.SkipGramOptionsStart(b)
    tflite.SkipGramOptionsAddNgramSize(b, 3)
    b.Finish(tflite.SkipGramOptionsEnd(b))
    buf = bytes(b.Output())
    table = Table(buf, int(np.frombuffer(buf, "<u4", 1)[0]))
    assert parse_options(BuiltinOptions.SkipGramOptions, table) == RawOptions(
        "SkipGramOptions", int(BuiltinOptions.SkipGramOptions), True)
    assert parse_options(BuiltinOptions.NONE, None) is None
