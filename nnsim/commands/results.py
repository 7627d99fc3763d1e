"""What ``nnsim run`` says about a model's outputs: each output recognised as what it is.

* detections: the four outputs of TFLite's ``TFLite_Detection_PostProcess`` custom op (boxes
  [1,N,4] as ymin, xmin, ymax, xmax normalised, classes [1,N], scores [1,N], count [1]),
  printed as label, score and box;
* segmentation: a [1,H,W] integer class map, or [1,H,W,C] per-class scores whose H,W are an
  image input's, printed as a class histogram (and a PNG mask with ``--output-dir``);
* classifier: a [1,N] score vector (N >= 2) produced by SOFTMAX / LOGISTIC / LOG_SOFTMAX, or
  with 1000/1001 classes (ImageNet heads ending in a FULLY_CONNECTED), printed as top-k;
* anything else (an autoencoder's reconstruction, embeddings, ...): value range only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nnsim.commands.common import UsageError, default_labels

DETECTION_OP = "TFLite_Detection_PostProcess"
SCORE_OPS = {"SOFTMAX", "LOGISTIC", "LOG_SOFTMAX"}
# Label files whose first line stands for "no class" (TFLite's example labelmap.txt begins
# with "???"): class id c then has label c + 1, as the TFLite detection examples index it.
BACKGROUND_LINES = {"???", "background", "__background__", "unlabeled"}


def read_label_file(path: str) -> list[str]:
    """--labels: a missing or unreadable file is a usage error (checked before the run)."""
    try:
        return Path(path).read_text(errors="replace").splitlines()
    except OSError as e:
        raise UsageError(f"--labels {path}: {e.strerror or e}") from None


def _producers(model) -> dict:
    return {o: n for n, op in enumerate(model.main.operators) for o in op.outputs if o >= 0}


def _dequantize(value, detail) -> np.ndarray:
    scale, zp = detail.get("quantization", (0.0, 0))
    v = value.astype(np.float64)
    return (v - zp) * scale if scale else v


def interpret_outputs(interp, labels, model_path, top: int, threshold: float) -> list[dict]:
    """One entry per output (detections group their four outputs): kind, text lines, JSON."""
    model = interp.model
    ops = model.main.operators
    producer = _producers(model)
    details = interp.get_output_details()
    values = [interp.get_tensor(d["index"]) for d in details]
    image_hw = {tuple(int(x) for x in d["shape"][1:3]) for d in interp.get_input_details()
                if len(d["shape"]) == 4} | {tuple(int(x) for x in d["shape"][2:4])
                                            for d in interp.get_input_details()
                                            if len(d["shape"]) == 4 and d["shape"][1] == 3}
    reports, done = [], set()
    for k, (d, v) in enumerate(zip(details, values)):
        if k in done:
            continue
        node = producer.get(int(d["index"]))
        op_name = ops[node].name if node is not None else None
        if op_name == DETECTION_OP:
            group = [j for j, dj in enumerate(details)
                     if producer.get(int(dj["index"])) == node]
            if len(group) == 4:
                outs = {ops[node].outputs.index(int(details[j]["index"])): values[j]
                        for j in group}
                if sorted(outs) == [0, 1, 2, 3]:
                    done.update(group)
                    reports.append(_detections(group, outs, labels, threshold))
                    continue
        reports.append(_single(k, d, v, op_name, labels, model_path, top, image_hw))
    return reports


def _label(labels, c: int, offset: int) -> str:
    i = c + offset
    return labels[i] if labels and 0 <= i < len(labels) else f"class {c}"


def _detections(group, outs, labels, threshold) -> dict:
    boxes, classes, scores, count = (np.asarray(outs[i], np.float64).reshape(-1) for i in range(4))
    n = int(count[0]) if count.size else 0
    n = max(0, min(n, scores.size, classes.size, boxes.size // 4))
    offset = 1 if labels and labels[0].strip().lower() in BACKGROUND_LINES else 0
    items, lines = [], []
    for s in range(n):
        c, score = int(classes[s]), float(scores[s])
        box = [round(float(x), 4) for x in boxes[4 * s:4 * s + 4]]
        item = {"slot": s, "class": c, "label": _label(labels, c, offset),
                "score": round(score, 4), "box": box}
        items.append(item)
        if score >= threshold:
            lines.append(f"  {item['label']} {score:.2f} box [ymin, xmin, ymax, xmax] = "
                         f"[{', '.join(f'{x:.3f}' for x in box)}]")
    head = (f"detections ({DETECTION_OP}, outputs {group[0]}-{group[-1]}): {n} found, "
            f"{len(lines)} with score >= {threshold:g}")
    return {"kind": "detections", "outputs": group, "lines": [head] + lines,
            "json": {"kind": "detections", "outputs": group, "count": n,
                     "threshold": threshold, "detections": items}}


def _single(k, d, v, op_name, labels, model_path, top, image_hw) -> dict:
    shape = tuple(v.shape)
    head = f"output {k} '{d['name']}': {v.dtype} {list(shape)}"
    info = {"index": k, "name": d["name"], "dtype": str(v.dtype), "shape": list(shape)}
    if len(shape) == 3 and shape[0] == 1 and v.dtype.kind in "iu" and min(shape[1:]) > 1:
        return _segmentation(head, info, v[0], labels)
    if len(shape) == 4 and shape[0] == 1 and shape[1:3] in image_hw and 2 <= shape[3] <= 1024:
        return _segmentation(head, info, np.argmax(_dequantize(v, d), axis=-1)[0], labels,
                             logits=True)
    if (len(shape) == 2 and shape[0] == 1 and shape[1] >= 2
            and (op_name in SCORE_OPS or shape[1] in (1000, 1001))):
        return _classifier(head, info, v, d, labels, model_path, top)
    lines = [head]
    if v.size and v.dtype.kind in "biuf":
        f = _dequantize(v, d)
        lines.append(f"  values: min {f.min():.4g}, max {f.max():.4g}, mean {f.mean():.4g}")
    return {"kind": "tensor", "outputs": [k], "lines": lines, "json": {**info, "kind": "tensor"}}


def _classifier(head, info, v, d, labels, model_path, top) -> dict:
    scores = _dequantize(v.reshape(-1), d)
    n = scores.size
    if labels is not None and len(labels) < n:
        labels = None   # not this output's labels (e.g. 90 COCO names for 1001 classes)
    if labels is None:
        labels = default_labels(model_path, n)
    order = np.argsort(-scores, kind="stable")[:max(top, 0)]
    items = [{"class": int(i), "label": labels[i] if labels else None,
              "score": round(float(scores[i]), 6)} for i in order]
    lines = [head]
    if items:
        lines.append(f"  top-{len(items)}: " + ", ".join(
            f"{it['class']}{' ' + it['label'] if it['label'] else ''} ({it['score']:.3f})"
            for it in items))
    return {"kind": "classifier", "outputs": [info["index"]], "lines": lines,
            "json": {**info, "kind": "classifier", "top": items}}


def _segmentation(head, info, class_map, labels, logits=False) -> dict:
    flat = class_map.reshape(-1).astype(np.int64)
    total = flat.size
    counts = np.bincount(np.clip(flat, 0, None)) if total else np.zeros(0, np.int64)
    order = [int(c) for c in np.argsort(-counts, kind="stable") if counts[c]]
    hist = [{"class": c, "label": labels[c] if labels and c < len(labels) else None,
             "pixels": int(counts[c]), "fraction": round(counts[c] / total, 4)} for c in order]
    text = ", ".join(f"{h['class']}{' ' + h['label'] if h['label'] else ''} "
                     f"{100 * h['fraction']:.1f}%" for h in hist)
    what = "argmax of per-class scores" if logits else "class map"
    lines = [head, f"  segmentation ({what}, {total} pixels): {text}"]
    return {"kind": "segmentation", "outputs": [info["index"]], "lines": lines,
            "class_map": class_map,
            "json": {**info, "kind": "segmentation", "histogram": hist}}
