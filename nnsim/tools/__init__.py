"""Tools built on the TFLite library, as TFLite keeps ``tools/benchmark/`` apart from its
runtime: ``benchmark`` (benchmark_model on a simulated board, with ``benchmark_flags``,
``benchmark_progress`` and the profiling tables of ``stats``) and ``demo_model`` (the built-in
demo of ``nnsim run``). They sit in the tools layer (tests/unit/test_layers.py): they may use
the CLI plumbing of ``nnsim.commands``; the library (``nnsim.tflite``) never imports them.
"""
