"""What the operation layer, the drivers and the runtime share, as AOSP's ``common/``: operands
(``operand``) and operand validation (``validation``). Imports only the platform layer below it."""
