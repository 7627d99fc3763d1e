"""The custom op ``TFLite_Detection_PostProcess`` on the CPU.

Its options are a flexbuffer map (``custom_options``) read as the op's ``Init`` does:
``max_detections``, ``max_classes_per_detection``, ``num_classes``, ``nms_score_threshold``,
``nms_iou_threshold``, ``y_scale``/``x_scale``/``h_scale``/``w_scale`` (float32), and the
optional ``detections_per_class`` (default 100) and ``use_regular_nms`` (default false).
"""
from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from nnsim.kernels.detection import DetectionParams, detection_postprocess
from nnsim.tflite.builtins._base import BuiltinOp

_REQUIRED = ("max_detections", "max_classes_per_detection", "num_classes",
             "nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale",
             "w_scale")


def parse_detection_options(node) -> DetectionParams:
    raw = node.op.custom_options
    if not raw:
        raise node.error("custom_options (a flexbuffer map) are missing")
    try:
        m = flexbuffers.Loads(raw)
    except Exception as e:  # flexbuffers raises assorted errors on bad bytes
        raise node.error(f"custom_options are not a valid flexbuffer ({e})") from None
    if not isinstance(m, dict):
        raise node.error("custom_options are not a flexbuffer map")
    missing = [k for k in _REQUIRED if k not in m]
    if missing:
        raise node.error(f"custom_options lack {', '.join(missing)}")
    f32 = lambda k: float(np.float32(m[k]))  # noqa: E731 - AsFloat() narrows to float
    p = DetectionParams(
        max_detections=int(m["max_detections"]),
        max_classes_per_detection=int(m["max_classes_per_detection"]),
        num_classes=int(m["num_classes"]),
        nms_score_threshold=f32("nms_score_threshold"),
        nms_iou_threshold=f32("nms_iou_threshold"),
        y_scale=f32("y_scale"), x_scale=f32("x_scale"), h_scale=f32("h_scale"),
        w_scale=f32("w_scale"),
        detections_per_class=int(m.get("detections_per_class", 100)),
        use_regular_nms=bool(m.get("use_regular_nms", False)))
    if p.max_detections < 0 or p.max_classes_per_detection < 0 or p.detections_per_class < 0:
        raise node.error("max_detections, max_classes_per_detection and detections_per_class "
                         "must be non-negative")
    if p.num_classes <= 0:
        raise node.error("num_classes must be positive")
    return p


class DetectionPostProcess(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        if len(node.op.inputs) != 3 or len(node.op.outputs) != 4:
            raise node.error("expects 3 inputs and 4 outputs")
        self.params = parse_detection_options(node)
        self.q = {}
        for k, name in enumerate(("box_q", "score_q", "anchor_q")):
            dtype = node.dtype_in(k)
            if dtype == np.uint8:
                self.q[name] = node.require_quant(node.input(k))
            elif dtype != np.float32:
                raise node.error(f"input {k} type {dtype.name} is not supported",
                                 unsupported=True)

    def prepare(self, shapes):
        boxes, scores, anchors = shapes
        if len(boxes) != 3 or len(scores) != 3 or len(anchors) != 2 or boxes[2] < 4:
            raise self.error(f"input shapes {shapes} are not [1,N,>=4], [1,N,C], [N,4]")
        if boxes[0] != 1 or scores[0] != 1 or scores[1] != boxes[1]:
            raise self.error(f"input shapes {shapes}: batch must be 1 and N must match")
        d = self.params.max_detections * self.params.max_classes_per_detection
        return [(1, d, 4), (1, d), (1, d), (1,)]

    def eval(self, inputs):
        try:
            return list(detection_postprocess(*inputs, self.params, **self.q))
        except ValueError as e:
            raise self.error(str(e)) from None
