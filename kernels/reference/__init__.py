"""Reference kernels: plain numpy, vectorised and readable; the oracle for the numba kernels.

Each module mirrors ``nnsim.kernels.<family>`` with the same public signatures. Integer paths
compute in int64 and emulate TFLite's int32 wrap-around explicitly (``_fixed_point``).
"""
