"""Issue 12 item 3: `nnsim run` says what each output is (review D3, D4, D12)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from .cliutil import MODELS, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")
SSD = MODELS / "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata.tflite"
PHOTO = MODELS / "grace_hopper.bmp"


@needs_models
def test_ssd_outputs_are_printed_as_detections():
    """LiteRT on grace_hopper: slot 0 person 0.72, slot 1 class 31 (tie) 0.64 (review D3);
    coco_labels.txt has no '???' line, so class c is line c."""
    r = nnsim("run", SSD, "--input", PHOTO, "--labels", MODELS / "coco_labels.txt")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("detections ("))
    assert lines[k + 1].startswith("  person 0.72 box [ymin, xmin, ymax, xmax] = [")
    assert lines[k + 2].startswith("  tie 0.64 box")
    assert "top-" not in r.stdout and "bicycle" not in r.stdout


@needs_models
def test_ssd_json_detections_with_a_background_line_label_file(tmp_path):
    labels = tmp_path / "labelmap.txt"   # TFLite's example layout: '???' first, class c at c+1
    labels.write_text("???\n" + (MODELS / "coco_labels.txt").read_text())
    r = nnsim("run", SSD, "--input", PHOTO, "--labels", labels, "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    det = next(o for o in doc["outputs"] if o["kind"] == "detections")
    assert det["outputs"] == [0, 1, 2, 3] and det["count"] == 10
    assert [(d["class"], d["label"]) for d in det["detections"][:2]] == [(0, "person"),
                                                                      (31, "tie")]
    assert abs(det["detections"][0]["score"] - 0.72) < 0.005
    assert all(len(d["box"]) == 4 for d in det["detections"])


@needs_models
def test_deeplab_histogram_and_png_mask(tmp_path):
    r = nnsim("run", MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "--input", PHOTO,
              "--labels", MODELS / "pascal_voc_segmentation_labels.txt",
              "--output-dir", tmp_path)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "segmentation (class map" in x)
    assert "263169 pixels" in line and "15 person" in line and "0 background" in line
    assert "top-" not in r.stdout
    class_map = np.load(tmp_path / "output_0.npy")[0]
    person = float(np.mean(class_map == 15))
    assert f"15 person {100 * person:.1f}%" in line and person > 0.3
    pil = pytest.importorskip("PIL.Image")
    with pil.open(tmp_path / "output_0_mask.png") as im:
        assert im.mode == "P" and im.size == (513, 513)
        rgb = np.asarray(im.convert("RGB"))
    assert (rgb[class_map == 15] == (192, 128, 128)).all()   # PASCAL VOC colour of person
    assert (rgb[class_map == 0] == 0).all()


@needs_models
def test_classifier_topk_only_for_classifier_outputs():
    r = nnsim("run", MODELS / "ad01_int8.tflite")   # a 640-value reconstruction
    assert r.returncode == 0, r.stderr
    assert "top-" not in r.stdout and "  values: min " in r.stdout
    r = nnsim("run", MODELS / "mobilenet_v1_0.25_224_quant.tflite", "--input", PHOTO)
    assert r.returncode == 0, r.stderr
    assert "  top-5: 835 suit, suit of clothes" in r.stdout   # LiteRT's top-1 on this photo


@needs_models
def test_npy_dtype_mismatch_is_rejected_as_litert_does(tmp_path):
    f = tmp_path / "f.npy"
    np.save(f, np.random.default_rng(0).random((1, 128, 128, 3)).astype(np.float32))
    r = nnsim("run", MODELS / "mobilenet_v1_0.25_128_quant.tflite", "--input", f)
    assert r.returncode == 1
    err = [x for x in r.stderr.splitlines() if x.startswith("nnsim: error:")]
    assert len(err) == 1 and "Traceback" not in r.stderr
    assert "Got value of type FLOAT32 but expected type UINT8 for input 0, name: input" in err[0]
    assert "--input_quantize" in err[0]
    i64 = tmp_path / "i.npy"
    np.save(i64, np.full((1, 128, 128, 3), 300, np.int64))
    r = nnsim("run", MODELS / "mobilenet_v1_0.25_128_quant.tflite", "--input", i64)
    assert r.returncode == 1 and "Got value of type INT64 but expected type UINT8" in r.stderr


@needs_models
def test_input_quantize_uses_the_inputs_scale_and_zero_point(tmp_path):
    """mobilenet_v1_0.25_128_quant's input: scale 1/128, zero point 128. The quantized values,
    computed here by hand (round half away from zero, saturate), give the same outputs."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.2, 1.2, (1, 128, 128, 3)).astype(np.float32)
    x.reshape(-1)[:4] = [0.5 / 128, -0.5 / 128, 1.5 / 128, 2.0]   # ties and saturation
    q = np.clip(np.sign(x / (1 / 128)) * np.floor(np.abs(x * 128.0) + 0.5) + 128, 0, 255)
    assert list(q.reshape(-1)[:4]) == [129, 127, 130, 255]
    np.save(tmp_path / "f.npy", x)
    np.save(tmp_path / "q.npy", q.astype(np.uint8))
    model = MODELS / "mobilenet_v1_0.25_128_quant.tflite"
    a = nnsim("run", model, "--input", tmp_path / "f.npy", "--input_quantize",
              "--output-dir", tmp_path / "a")
    b = nnsim("run", model, "--input", tmp_path / "q.npy", "--output-dir", tmp_path / "b")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert np.array_equal(np.load(tmp_path / "a/output_0.npy"), np.load(tmp_path / "b/output_0.npy"))


@needs_models
def test_nchw_image_input_with_mean_std_and_quantize(tmp_path):
    """mobilenet_v2_quantized_1x3x224x224 (int8 NCHW, ImageNet mean/std preprocessing)."""
    from nnsim.images import image_to_input, read_image
    detail = {"shape": np.array([1, 3, 224, 224]), "dtype": np.int8, "name": "input.5",
              "quantization": (0.018631115555763245, -14)}
    x = image_to_input(read_image(PHOTO), detail, mean=123.7, std=58.4, quantize=True)
    nhwc = image_to_input(read_image(PHOTO), dict(detail, shape=np.array([1, 224, 224, 3]),
                                                  dtype=np.float32), mean=123.7, std=58.4)
    assert x.shape == (1, 3, 224, 224) and x.dtype == np.int8
    v = nhwc.transpose(0, 3, 1, 2).astype(np.float64) / detail["quantization"][0]
    want = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) - 14, -128, 127)
    assert np.array_equal(x, want)
    r = nnsim("run", MODELS / "mobilenet_v2_quantized_1x3x224x224.tflite", "--input", PHOTO,
              "--input_quantize", "--input_mean", "123.7", "--input_std", "58.4")
    assert r.returncode == 0, r.stderr
    assert "top-5: " in r.stdout


@needs_models
def test_float_image_mean_std_flags(tmp_path):
    from nnsim.images import image_to_input, read_image
    detail = {"shape": np.array([1, 4, 4, 3]), "dtype": np.float32, "name": "x",
              "quantization": (0.0, 0)}
    img = read_image(PHOTO)
    default = image_to_input(img, detail)
    custom = image_to_input(img, detail, mean=0.0, std=255.0)
    assert np.allclose(default, custom * 255.0 / 127.5 - 1.0, atol=1e-5)
    assert default.min() >= -1 and default.max() <= 1 and custom.min() >= 0


@needs_models
def test_png_and_jpeg_input_through_pillow(tmp_path):
    pil = pytest.importorskip("PIL.Image")
    from nnsim.images import read_image
    img = read_image(PHOTO)
    pil.fromarray(img).save(tmp_path / "p.png")
    pil.fromarray(img).save(tmp_path / "p.jpg", quality=95)
    assert np.array_equal(read_image(tmp_path / "p.png"), img)
    for name in ("p.png", "p.jpg"):
        r = nnsim("run", MODELS / "mobilenet_v1_0.25_224_quant.tflite", "--input",
                  tmp_path / name)
        assert r.returncode == 0, r.stderr
        assert "top-5: 835 suit" in r.stdout


@needs_models
def test_run_format_json(tmp_path):
    r = nnsim("run", MODELS / "mobilenet_v1_0.25_224_quant.tflite", "--input", PHOTO,
              "--format", "json", "--vlog")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)   # stdout is the JSON document only (logcat lines on stderr)
    assert doc["model"] == "mobilenet_v1_0.25_224_quant.tflite" and doc["board"] == "imx8mp"
    assert doc["devices"].startswith("vsi-npu")
    assert len(doc["placements"]) == 31
    assert {p["where"] for p in doc["placements"]} == {"vsi-npu"}
    assert doc["placements"][0] == {"node": 0, "op": "CONV_2D", "where": "vsi-npu",
                                    "partition": 0}
    t = doc["time_ms"]
    assert t["simulated_first"] > t["simulated_steady"] > 0
    out = doc["outputs"][0]
    assert out["kind"] == "classifier" and out["top"][0]["class"] == 835
    assert "ExecutionPlan" in r.stderr


@needs_models
def test_missing_labels_file_is_an_error():
    r = nnsim("run", MODELS / "hello_world_int8.tflite", "--labels", "/nonexistent/labels.txt")
    assert r.returncode == 2 and "--labels /nonexistent/labels.txt" in r.stderr
    assert "Traceback" not in r.stderr
