"""The TFLite CPU path's activation arena (:mod:`nnsim.ops.arena`, as TFLite's
``ArenaPlanner``): once the interpreter binds its plan (after the first invoke, when every
output buffer exists), each tensor a builtin computes moves to its offset in one shared arena
if the builtin agrees (``BuiltinOp.adopt_output``). Graph inputs and outputs, constants and
variable tensors keep their own buffers; as in TFLite, the other tensors' values are gone once
later steps have run (``experimental_preserve_all_tensors=True`` keeps them all).
"""
from __future__ import annotations

from nnsim.ops.arena import share

__all__ = ["share_buffers"]


def share_buffers(steps, values, keep):
    """:func:`nnsim.ops.arena.share` of the outputs of the builtin steps of ``steps`` (the
    interpreter's resolved plan) but the tensors in ``keep``; returns the arena or None."""
    lives, owner = {}, {}
    for s, (_, builtin, ins, outs, _, _) in enumerate(steps):
        for i in ins:
            if i in lives:
                lives[i] = (lives[i][0], s)
        for o in outs:
            if o >= 0 and builtin is not None and o not in keep:
                lives[o], owner[o] = (s, s), builtin
    return share(lives, values, lambda o, old, new: owner[o].adopt_output(old, new))
