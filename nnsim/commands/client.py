"""The client a command emulates: which app applies the TFLite NNAPI delegate, with which options.

``run``, ``explain`` and ``graph`` emulate an app that creates an ``NnApiDelegate`` itself; the
same flags set its options in all three (``add_client_arguments``) and one default holds
everywhere: nnapi-reference allowed (``--disable_nnapi_cpu=false``), the setting of the app
whose int8-on-i.MX 8M Plus log the project's users brought (its convolutions on
nnapi-reference). ``benchmark`` and ``diff`` emulate benchmark_model and inference_diff, whose
library default is ``disallow_nnapi_cpu=true``. ``--device NAME`` keeps only the named
devices: naming no nnapi-reference excludes it too. Every command prints ``devices_line``:
the candidate devices and, for each excluded one, why.

``--external_delegate_path=libvx_delegate.so`` (with ``--external_delegate_options='k:v;k:v'``,
benchmark_model's spelling and splitting) makes the app apply the VX delegate instead
(nnsim.tflite.vx): the NNAPI flags then do not apply.
"""
from __future__ import annotations

import argparse

from nnsim.commands.argtypes import int_at_least
from nnsim.commands.common import UsageError
from nnsim.tflite import NnApiDelegate
from nnsim.tflite.vx import is_vx_library, load_vx_delegate
from nnsim.tflite.vx.options import split_cli_options

__all__ = ["flag_bool", "sdk_version", "add_client_arguments", "client_delegate",
           "nnapi_client_delegate", "uses_vx", "client_description", "devices_line",
           "CLIENT_DESCRIPTION"]

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


def add_client_arguments(p) -> None:
    """The NnApiDelegate options of the emulated app, spelled as benchmark_model spells them."""
    g = p.add_argument_group("NNAPI delegate options of the emulated app")
    g.add_argument("--disable_nnapi_cpu", "--disallow-nnapi-cpu", dest="disable_nnapi_cpu",
                   type=flag_bool, nargs="?", const=True, default=False, metavar="BOOL",
                   help="do not hand operations to nnapi-reference (TFLite's library default "
                        "is true; this app's default: false)")
    g.add_argument("--nnapi_accelerator_name", "--accelerator-name", dest="accelerator_name",
                   metavar="NAME", help="hand operations to this NNAPI device only")
    g.add_argument("--max_delegated_partitions", type=int_at_least(0, " (0 = no limit)"), default=3, metavar="N",
                   help="delegate at most N partitions (default 3, TFLite's; 0 = no limit)")
    x = p.add_argument_group("external delegate (instead of NNAPI)")
    x.add_argument("--external_delegate_path", "--external-delegate-path", metavar="LIB",
                   help="apply this external delegate instead of NNAPI: libvx_delegate.so "
                        "(any directory), the VX delegate on the board's NPU")
    x.add_argument("--external_delegate_options", "--external-delegate-options", default="",
                   metavar="'K:V;K:V'",
                   help="its options, key:value pairs separated by ';' (VX: "
                        "allowed_cache_mode:true;cache_file_path:/data/local/tmp/model.nb)")


def uses_vx(args) -> bool:
    """True when the flags ask for the VX delegate (UsageError for another library)."""
    path = getattr(args, "external_delegate_path", None)
    if not path:
        if getattr(args, "external_delegate_options", ""):
            raise UsageError("--external_delegate_options needs --external_delegate_path")
        return False
    if not is_vx_library(path):
        raise UsageError(f"--external_delegate_path={path}: nnsim emulates one external "
                         f"delegate, libvx_delegate.so (the VX delegate)")
    return True


def client_description(args) -> str:
    if uses_vx(args):
        return f"an app's external delegate {args.external_delegate_path} (the VX delegate)"
    return CLIENT_DESCRIPTION


def client_delegate(args, **extra):
    """The delegate of the emulated app: the VX delegate with --external_delegate_path, else
    the NnApiDelegate from the NNAPI flags (and ``--device``); ``extra``: NNAPI options."""
    if uses_vx(args):
        try:
            return load_vx_delegate(args.external_delegate_path,
                                    split_cli_options(args.external_delegate_options))
        except ValueError as e:
            raise UsageError(" ".join(str(e).split("\n")[1:])) from None
    return nnapi_client_delegate(args, **extra)


def nnapi_client_delegate(args, **extra):
    """The NnApiDelegate of the emulated app from the parsed flags (and ``--device``)."""
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
