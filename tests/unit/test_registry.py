"""The operation registry lists every OperationCode exactly once: registered or NOT_IMPLEMENTED."""
from collections import Counter

from nnsim.ops import registry
from nnsim.ops.base import OperationSpec
from nnsim.types import OperationCode


def test_registered_and_not_implemented_are_disjoint():
    assert not set(registry.REGISTRY) & set(registry.NOT_IMPLEMENTED)


def test_registered_and_not_implemented_cover_every_operation_code():
    covered = set(registry.REGISTRY) | set(registry.NOT_IMPLEMENTED)
    assert covered == set(OperationCode)


def test_not_implemented_holds_only_operation_codes():
    assert all(isinstance(c, OperationCode) for c in registry.NOT_IMPLEMENTED)


def test_every_spec_code_matches_its_key():
    for code, spec in registry.REGISTRY.items():
        assert isinstance(spec, OperationSpec)
        assert spec.code == code


def test_no_duplicate_registration():
    counts = Counter(spec.code for spec in registry.ALL_SPECS)
    assert [c.name for c, n in counts.items() if n > 1] == []
    assert len(registry.REGISTRY) == len(registry.ALL_SPECS)


def test_lookup():
    assert registry.lookup(OperationCode.CONV_2D) is registry.REGISTRY[OperationCode.CONV_2D]
    assert registry.is_registered(OperationCode.SOFTMAX)
    assert registry.lookup(OperationCode.OEM_OPERATION) is None
    assert not registry.is_registered(OperationCode.OEM_OPERATION)


def test_spec_functions_are_callable():
    for spec in registry.ALL_SPECS:
        assert callable(spec.validate) and callable(spec.prepare) and callable(spec.execute)
