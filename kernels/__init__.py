"""nnsim kernels: numpy reference kernels and numba fast paths, bit-exact with TFLite.

Layout (one module per operation family; import the module you need, nothing is re-exported):

* ``fixed_point`` - QuantizeMultiplier, SaturatingRoundingDoublingHighMul, RoundingDivideByPOT,
  MultiplyByQuantizedMultiplier, activation ranges, gemmlowp exp / reciprocal;
* ``conv``, ``depthwise``, ``fully_connected``, ``pooling``, ``elementwise`` (add/sub/mul),
  ``activations`` (relu family, logistic), ``softmax``, ``reshape`` (concatenation), ``pad``,
  ``reduce`` (mean), ``quantize`` (quantize / dequantize / requantize), and more families;
* ``reference/<family>`` - the same public functions in plain numpy: the readable oracle;
* ``_jit`` - the only module that imports numba (``NNSIM_DISABLE_JIT=1`` turns the JIT off);
* ``_common`` - argument checks and multiplier precompute shared by the wrappers;
* ``threads`` - the thread count plans are bound with (TFLite's ``num_threads``).

Conventions: NHWC tensors; every function returns a new array; float16 is computed in float32;
quantized wrappers take ``*_scale`` / ``*_zp`` keywords and an NNAPI fuse code. Each public
wrapper checks and precomputes, then calls a private ``@njit`` ``_<name>_core``.
"""
