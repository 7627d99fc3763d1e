"""The CLI's command table (``nnsim.cli.COMMANDS``) against the command modules it loads lazily."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from nnsim import cli


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_the_table_matches_the_command_module(name):
    """`nnsim --help` lists the table's help line without importing the module: it must be the
    module's own HELP."""
    module = importlib.import_module(cli.COMMANDS[name].module)
    assert module.NAME == name
    assert cli.COMMANDS[name].help == module.HELP
    if name in cli.OWN_FLAG_SYNTAX:
        assert callable(module.main)
    else:
        assert module.DESCRIPTION and module.EPILOG
        assert callable(module.add_arguments) and callable(module.run)


def test_help_and_one_command_import_only_that_command():
    """Start-up time: `nnsim --help` imports no command module (nor numba); a command imports
    its own module only."""
    code = ("import sys\n"
            "from nnsim.cli import main\n"
            "try:\n"
            "    main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('nnsim.commands.')), "
            "'numba' in sys.modules)\n"
            "main(['props', '--format', 'json'])\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules "
            "if m.startswith('nnsim.commands.')))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == str(["common", "errors", "props"])
    assert any(line == "['nnsim.commands.errors'] False" for line in lines)
