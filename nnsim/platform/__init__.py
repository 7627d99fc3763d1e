"""The emulated Android platform under every layer: system properties (``properties``), logcat
(``vlog``) and the simulated sysfs (``sysfs``). Imports only ``nnsim.types`` and ``nnsim.errors``."""
