"""The client a command emulates: which app applies the TFLite NNAPI delegate, with which options.

``run``, ``explain`` and ``graph`` emulate an app that creates an ``NnApiDelegate`` itself; the
same flags set its options in all three (``add_client_arguments``) and one default holds
everywhere: nnapi-reference allowed (``--disable_nnapi_cpu=false``), the setting of the app
whose int8-on-i.MX 8M Plus log the project's users brought (its convolutions on
nnapi-reference). ``benchmark`` and ``diff`` emulate benchmark_model and inference_diff, whose
library default is ``disallow_nnapi_cpu=true``. ``--device NAME`` keeps only the named
devices: naming no nnapi-reference excludes it too. Every command prints ``devices_line``:
the candidate devices and, for each excluded one, why.
"""
from __future__ import annotations

import argparse

__all__ = ["flag_bool", "sdk_version", "add_client_arguments", "client_delegate",
           "devices_line", "CLIENT_DESCRIPTION"]

CLIENT_DESCRIPTION = ("an app's NnApiDelegate (nnsim's default: nnapi-reference allowed; "
                      "--disable_nnapi_cpu for TFLite's library default)")


def flag_bool(text: str) -> bool:
    """argparse type of a benchmark_model-style boolean (true/false/1/0)."""
    value = str(text).strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expects true/false/1/0, got {text!r}")


def sdk_version(text: str) -> int:
    """argparse type of --android_sdk."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects an integer SDK level such as 29, got "
                                         f"{text!r}") from None
    if not 1 <= value <= 99:
        raise argparse.ArgumentTypeError(f"must be between 1 and 99 (27..34 are the NNAPI "
                                         f"SDK levels), got {value}")
    return value


def _partitions(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (0 = no limit), got {value}")
    return value


def add_client_arguments(p) -> None:
    """The NnApiDelegate options of the emulated app, spelled as benchmark_model spells them."""
    g = p.add_argument_group("NNAPI delegate options of the emulated app")
    g.add_argument("--disable_nnapi_cpu", "--disallow-nnapi-cpu", dest="disable_nnapi_cpu",
                   type=flag_bool, nargs="?", const=True, default=False, metavar="BOOL",
                   help="do not hand operations to nnapi-reference (TFLite's library default "
                        "is true; this app's default: false)")
    g.add_argument("--nnapi_accelerator_name", "--accelerator-name", dest="accelerator_name",
                   metavar="NAME", help="hand operations to this NNAPI device only")
    g.add_argument("--max_delegated_partitions", type=_partitions, default=3, metavar="N",
                   help="delegate at most N partitions (default 3, TFLite's; 0 = no limit)")


def client_delegate(args, **extra):
    """The NnApiDelegate of the emulated app from the parsed flags (and ``--device``)."""
    from nnsim.tflite import NnApiDelegate
    disallow_cpu = bool(args.disable_nnapi_cpu)
    devices = getattr(args, "device", None)
    if devices and "nnapi-reference" not in devices:
        disallow_cpu = True   # --device names the devices that may run operations
    return NnApiDelegate(disallow_nnapi_cpu=disallow_cpu,
                         accelerator_name=getattr(args, "accelerator_name", None),
                         max_number_delegated_partitions=args.max_delegated_partitions, **extra)


def devices_line(delegate, args=None) -> str:
    """The delegate's device set with the reason for each excluded device (and --device)."""
    return delegate.devices_text(getattr(args, "device", None) or ())
