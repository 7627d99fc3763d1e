"""Support rules: how a simulated device answers ``getSupportedOperations``, as data.

A :class:`SupportRules` value holds

* ``table``: OperationCode -> :class:`OpRule` (accepted operand types plus extra conditions,
  each condition returning the HAL's reason string when it refuses), or a zero-argument callable
  returning the table (re-read at every query: vsi-npu's table follows the BSP property);
* ``default_rule``: the row of operations missing from the table (None: they are refused with
  ``missing_reason``);
* ``global_rules``: conditions applied to every operation before its row (each returns a
  sequence of reasons, or None);
* the decision procedure: a VALIDATOR row runs ``validator_checks`` (when set) and then its
  own conditions, stopping at the first failure; with ``tail`` unset every other row stops at
  its first failure too, with ``tail`` set (vsi-npu) INLINE and DEFAULT rows collect every
  reason of their conditions and then of ``tail`` ("accumulate, then run the tail");
* per query: ``disabled`` (a reason refusing every operation without asking the HAL),
  ``blocked_ops`` (operation codes refused outright, read once per query), ``veto`` (a reason
  refusing the whole model) and ``log_frame`` (the HAL function name logged before the query
  and, with " exit", after it).

The per-model loop, the feature-level slice and the logcat lines are the driver's
(:class:`nnsim.drivers.simulated.SimulatedDriver`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from nnsim.ops.base import OperationView

VALIDATOR, INLINE, DEFAULT, REJECT = "validator", "inline", "default", "reject"

Check = Callable[[OperationView], "str | None"]


@dataclass(frozen=True)
class OpRule:
    """One row of a support table.

    ``kind``: VALIDATOR (checks stop at the first failure), INLINE / DEFAULT (the driver's
    common tail runs after ``checks``; all reasons are collected), REJECT (always refused).
    ``types``: accepted types of input ``type_index`` (None = any); ``pairs``: accepted
    (input, weight) type pairs; ``outputs``: accepted types of output 0; ``checks``: extra
    conditions returning a reason or None; ``label``: the op name used in reasons;
    ``source``: where the row comes from (a section of docs/reference/npu-drivers.md).
    """
    kind: str
    types: frozenset | None = None
    pairs: frozenset | None = None
    outputs: frozenset | None = None
    checks: tuple = ()
    label: str = ""
    reason: str = ""
    type_index: int = 0
    source: str = ""

    def check(self, view: OperationView, accumulate: bool = False) -> list[str]:
        label = self.label or view.name
        if self.kind == REJECT:
            return [self.reason or f"reject {label} because it is not supported"]
        if self.types is not None and view.input_type(self.type_index) not in self.types:
            return [f"reject {label} because input data type not support"]
        if self.pairs is not None and (view.input_type(0), view.input_type(1)) not in self.pairs:
            return [f"reject {label} because input data type not support"]
        if self.outputs is not None and view.outputs and view.output_type(0) not in self.outputs:
            return [f"reject {label} because output data type not support"]
        reasons = []
        for c in self.checks:
            r = c(view)
            if r:
                reasons.append(r)
                if not accumulate:
                    break
        return reasons


def types(*ts) -> frozenset:
    return frozenset(int(t) for t in ts)


@dataclass(frozen=True)
class SupportRules:
    """The support answer of one device; see the module docstring."""
    table: Mapping[int, OpRule] | Callable[[], Mapping[int, OpRule]] = field(
        default_factory=dict)
    default_rule: OpRule | None = None
    missing_reason: str = "reject {op} because it is not supported by {device}"
    global_rules: tuple[Callable[[OperationView], Sequence[str] | None], ...] = ()
    validator_checks: Check | None = None
    tail: Callable[[OperationView], list[str]] | None = None
    disabled: Callable[[], str | None] | None = None
    blocked_ops: Callable[[], set] | None = None
    blocked_reason: str = "reject op because it is blocked"
    veto: Callable[[object], str | None] | None = None
    log_frame: Callable[[], str] | None = None

    def current_table(self) -> Mapping[int, OpRule]:
        return self.table() if callable(self.table) else self.table

    def reasons(self, view: OperationView, device: str, blocked=frozenset(),
                table: Mapping[int, OpRule] | None = None) -> list[str]:
        """Reasons to refuse one operation (empty = supported), in the procedure's order.
        ``blocked``: this query's ``blocked_ops``; ``table``: this query's table."""
        if view.code in blocked:
            return [self.blocked_reason]
        reasons = [r for rule in self.global_rules for r in (rule(view) or ())]
        if reasons:
            return reasons
        rule = (self.current_table() if table is None else table).get(view.code,
                                                                     self.default_rule)
        if rule is None:
            return [self.missing_reason.format(op=view.name, device=device)]
        if rule.kind == REJECT:
            return rule.check(view)
        if self.tail is None or rule.kind == VALIDATOR:
            first = self.validator_checks(view) if (self.validator_checks is not None
                                                    and rule.kind == VALIDATOR) else None
            return [first] if first else rule.check(view)
        return rule.check(view, accumulate=True) + self.tail(view)
