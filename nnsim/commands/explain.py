"""``nnsim explain``: why each operation ran where it ran, and what to change."""
from __future__ import annotations

import json

import nnsim
from nnsim.commands.client import (add_client_arguments, client_delegate,
                                   nnapi_client_delegate, sdk_version, uses_vx)
from nnsim.commands.common import (RunError, UsageError, apply_board, apply_setprops,
                                   install_log_handlers, load_model_bytes)
from nnsim.errors import ModelFileError
from nnsim.explain import explain, format_text, to_json
from nnsim.explain_steps import format_steps, record_steps
from nnsim.explain_vx import advise, explain_vx
from nnsim.tflite.delegate import DelegateError
from nnsim.tflite.reader import read_model
from nnsim.tflite.vx import VxDelegate

NAME = "explain"
HELP = "for every node and device: supported or not, the exact reason, and fixes"
DESCRIPTION = ("Apply the TFLite NNAPI delegate for the board's devices and explain every "
               "node: the delegate's validation failures, each device's answer, the device "
               "that won, and known fixes.")
EPILOG = """examples:
  nnsim explain deeplabv3_mnv2_pascal_quant.tflite --android_sdk 29
  nnsim explain tf2_mobilenet_v2_1.0_224_ptq.tflite --board imx8mp
  nnsim explain model.tflite --fallback-only          # only what misses the NPU, costliest first
  nnsim explain model.tflite --format json > explain.json
  nnsim explain model.tflite --steps                  # the partitioner's decisions, in order
  nnsim explain model.tflite --external_delegate_path=libvx_delegate.so   # the VX delegate

Each explanation ends with a recommendation when the other delegate (VX for NNAPI, the app's
NNAPI delegate for VX) would run more nodes on the board's NPU, with both simulated times."""


def add_arguments(p) -> None:
    p.add_argument("model", help="the .tflite model")
    p.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    p.add_argument("--device", action="append", metavar="NAME",
                   help="keep only this NNAPI device of the board (repeatable)")
    p.add_argument("--android_sdk", "--android-sdk", type=sdk_version, metavar="N",
                   help="emulated Android SDK version (default: the board's)")
    add_client_arguments(p)
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property (repeatable)")
    p.add_argument("--fallback-only", "--fallback_only", dest="fallback_only",
                   action="store_true",
                   help="show only the nodes not on an accelerator (TFLite CPU or "
                        "nnapi-reference), the costliest on the board's CPU first")
    p.add_argument("--steps", action="store_true",
                   help="print the partitioner's decisions in the order they are made instead: "
                        "delegate device selection and Validate per node, each device's "
                        "getSupportedOperations, findBestDeviceForEachOperation with the exec "
                        "times compared, partitionTheWork steps, CPU fallback")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: text)")


def run(args, out) -> int:
    apply_board(args.board, args.device)
    if args.android_sdk:
        nnsim.setprop("ro.build.version.sdk", str(args.android_sdk))
    apply_setprops(args.setprop)
    install_log_handlers(out)
    name, data = load_model_bytes(args.model)
    try:
        model = read_model(data)
    except ModelFileError as e:
        raise RunError(f"{args.model}: {e.what}" + (f" at {e.where}" if e.where else "")) \
            from None
    vx = uses_vx(args)
    if args.steps and vx:
        raise UsageError("--steps records the NNAPI partitioner's decisions; the VX delegate "
                         "makes none (drop --external_delegate_path)")
    if args.steps:
        _, error, events = record_steps(model, client_delegate(args))
        if args.format == "json":
            print(json.dumps(events, indent=2), file=out)
        else:
            print("\n".join(format_steps(events)), file=out)
            if error:
                print(f"delegate failed: {error}", file=out)
        return 0
    delegate = client_delegate(args)
    try:
        if vx:
            ex = explain_vx(model, delegate, name)
            advise(model, ex, delegate.result, lambda: nnapi_client_delegate(args), True)
        else:
            ex = explain(model, delegate, name)
            advise(model, ex, None if ex.delegate_error else delegate.result, VxDelegate,
                   False)
    except DelegateError as e:
        raise RunError(str(e)) from None
    if args.format == "json":
        print(json.dumps(to_json(ex, args.fallback_only), indent=2), file=out)
    else:
        print("\n".join(format_text(ex, args.fallback_only)), file=out)
    return 0
