"""The op matrix: for every TFLite builtin and every NNAPI OperationCode, which layers of nnsim
implement it, and why a layer that does not is allowed not to.

What nnsim knows about one operation is spread over several registries keyed by two enums
(architecture.md, "Data flow"); this module reads them all and puts them side by side:

TFLite builtin rows (``tflite_rows``):
    delegate   the NNAPI delegate's Validate rule (``tflite/validate.py`` RULES)
    converter  the NNAPI operations the delegate's converter maps it to (``convert/nodes.py``,
               ``convert/lowerings.py``): ``convert.mapping.tflite_to_nnapi()``
    cpu        nnsim's TFLite CPU kernel: "dedicated" (``builtins.BUILTINS``), "nnapi" (run
               through its NNAPI lowering, ``builtins.NNAPI_BACKED``) or "" (none)
NNAPI rows (``nnapi_rows``):
    spec       the registered OperationSpec (``ops/registry.py``), else NOT_IMPLEMENTED
    kernels    the ``nnsim.kernels`` modules its execute uses, and whether each has a numpy
               reference (``kernels/reference/``)
    vsi-npu / synap-npu   the simulated driver's support-table rule kind (absent = refused)
    timing     the timing model's operation class (``drivers/timing.py``)

``GAPS`` lists every hole that is deliberate, with its reason; ``holes()`` returns the others.
``tests/unit/test_op_matrix.py`` fails on any hole not in ``GAPS`` (and on a stale entry), and
``nnsim ops`` prints the matrix.
"""
from __future__ import annotations

import inspect
import types as pytypes
from dataclasses import dataclass
from pathlib import Path

import nnsim.kernels
from nnsim.drivers import timing
from nnsim.drivers.boards import make_driver
from nnsim.ops.registry import REGISTRY
from nnsim.tflite import builtins
from nnsim.tflite.convert.mapping import nnapi_code_for_builtin, tflite_to_nnapi
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.validate import RULES
from nnsim.types import OperationCode as C

__all__ = ["tflite_to_nnapi", "GAPS", "TfliteRow", "NnapiRow", "tflite_rows", "nnapi_rows",
           "holes", "nnapi_code_for_builtin"]


# Deliberate holes: (layer, operation name) -> why. Layers: "delegate", "converter", "cpu",
# "timing", "vsi-npu" (the driver has no rule: the HAL refuses the op).
GAPS: dict = {
}


@dataclass(frozen=True)
class TfliteRow:
    builtin: str
    delegate: bool
    converter: tuple      # NNAPI operation names
    cpu: str              # "dedicated", "nnapi" or ""


@dataclass(frozen=True)
class NnapiRow:
    code: str
    value: int
    spec: bool
    kernels: tuple        # (module, has numpy reference)
    vsi_npu: str          # rule kind, "" = no rule (refused)
    synap_npu: str
    timing: str           # timing class ("other" = the generic one), "" = none


def tflite_rows() -> list[TfliteRow]:
    rows = []
    for b in sorted(B, key=lambda x: x.name):
        if b == B.CUSTOM:
            continue
        codes = tflite_to_nnapi().get(b, ())
        if b in builtins.BUILTINS:
            cpu = "dedicated"
        elif b in builtins.NNAPI_BACKED:
            cpu = "nnapi"
        else:
            cpu = ""
        rows.append(TfliteRow(b.name, b in RULES, tuple(c.name for c in codes), cpu))
    return rows


def _kernel_modules(spec) -> tuple:
    """The nnsim.kernels modules an operation module imports, and whether each has a numpy
    reference in kernels/reference/."""
    module = inspect.getmodule(spec.execute)
    found = []
    for value in vars(module).values():
        mod = value if isinstance(value, pytypes.ModuleType) else inspect.getmodule(value)
        if mod is None or not mod.__name__.startswith("nnsim.kernels."):
            continue
        name = mod.__name__.split(".")[2]
        if name.startswith("_") or name == "reference":
            continue
        found.append(name)
    ref_dir = Path(nnsim.kernels.__file__).parent / "reference"
    return tuple((n, (ref_dir / f"{n}.py").exists()) for n in sorted(set(found)))


def _rule_kind(driver, code) -> str:
    rule = driver.support_table.get(code)
    return "" if rule is None else rule.kind


def nnapi_rows() -> list[NnapiRow]:
    vsi, synap = make_driver("vsi-npu", "imx8mp"), make_driver("synap-npu", "vs680")
    rows = []
    for code in C:
        spec = REGISTRY.get(code)
        rows.append(NnapiRow(code.name, int(code), spec is not None,
                             _kernel_modules(spec) if spec is not None else (),
                             _rule_kind(vsi, code), _rule_kind(synap, code),
                             timing.op_class(code)))
    return rows


def holes(include_gaps: bool = False) -> list[tuple[str, str, str]]:
    """Every (layer, operation, what is missing) that ``GAPS`` does not explain (all of them,
    explained or not, with ``include_gaps``)."""
    out = []
    for row in tflite_rows():
        # DENSIFY is converted to nothing: its sparse constant feeds the next node (3.7)
        converted = bool(row.converter) or row.builtin == "DENSIFY"
        if row.delegate and not converted:
            out.append(("converter", row.builtin, "validated by the delegate but not mapped"))
        if row.converter and not row.delegate:
            out.append(("delegate", row.builtin, "mapped but has no Validate rule"))
        if converted and not row.cpu:
            out.append(("cpu", row.builtin, "the delegate may leave it on the CPU, which has no "
                                            "kernel for it"))
        for name in row.converter:
            if C[name] not in REGISTRY:
                out.append(("spec", name, f"the delegate maps {row.builtin} to it but nnsim "
                                          f"does not implement it"))
    for code in REGISTRY:
        if not timing.op_class(code):
            out.append(("timing", C(code).name, "registered but has no timing class"))
    unique = sorted(set(out))
    return [h for h in unique if include_gaps or (h[0], h[1]) not in GAPS]
