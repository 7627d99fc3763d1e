"""The parts a simulated driver is built from (review P3): one final class, the registry, the
board timing by device name, properties declared once, the runtime's compiled-model files."""
from __future__ import annotations

import pytest

from nnsim.common.model_bytes import model_fingerprint
from nnsim.drivers.base import Driver
from nnsim.drivers.boards import BOARDS, make_driver
from nnsim.drivers.registry import BUILTIN, create_driver
from nnsim.drivers.simulated import SimulatedDriver
from nnsim.drivers.synap_npu import synap_npu
from nnsim.drivers.vsi_npu import tail_reasons, validator_checks, vsi_npu
from nnsim.platform.properties import KNOWN_PROPERTIES
from nnsim.runtime.cache import DeviceCache
from tests.drivers.helpers import U8, conv_model


def test_the_base_driver_claims_nothing():
    with pytest.raises(NotImplementedError):
        Driver().supported_operations(conv_model(U8))


def test_simulated_driver_is_final():
    with pytest.raises(TypeError, match="final"):
        type("MyNpu", (SimulatedDriver,), {})


def test_the_registry_resolves_every_board_device():
    for board in BOARDS.values():
        for name in board.devices[:-1]:
            assert name in BUILTIN and make_driver(name, board.name).name == name
    assert create_driver("google-edgetpu").name == "google-edgetpu"
    with pytest.raises(ValueError, match="no simulated driver named 'pixel-tpu'"):
        create_driver("pixel-tpu", "imx8mp")


def test_single_npu_profiles_time_every_accelerator_with_their_npu():
    for board in BOARDS.values():
        assert board.accelerators == {}
        driver = make_driver(board.devices[0], board.name)
        assert driver.timing.params is board.npu is board.accelerator(driver.name)


def test_vsi_and_synap_share_the_verisilicon_rule_set():
    vsi, synap = vsi_npu(), synap_npu()
    for d in (vsi, synap):
        assert d.rules.validator_checks is validator_checks and d.rules.tail is tail_reasons
    assert vsi.support_table == synap.support_table   # the same BSP level by default
    assert vsi.rules.veto is not None and synap.rules.veto is None       # no MODEL_BLOCK_LEVEL
    assert synap.rules.disabled is not None and vsi.rules.disabled is None


def test_properties_are_declared_once_at_import():
    before = dict(KNOWN_PROPERTIES)
    assert "vendor.nnsim.vsi.bsp" in before and "vendor.NNAPI_SYNAP_DISABLE" in before
    vsi_npu(), synap_npu()
    assert KNOWN_PROPERTIES == before


def test_the_runtime_stores_and_rebuilds_a_drivers_model(tmp_path):
    cache = DeviceCache(b"t" * 32, [str(tmp_path / "m")], [str(tmp_path / "d")])
    owner = {"device": "vsi-npu", "version": "1"}
    model = conv_model(U8)
    cache.store_model(owner, model)
    rebuilt = cache.load_model(owner)
    assert model_fingerprint(rebuilt) == model_fingerprint(model)
    with pytest.raises(ValueError, match="written by"):
        cache.load_model({"device": "synap-npu", "version": "1"})
