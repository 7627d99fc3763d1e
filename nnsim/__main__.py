import sys

try:
    from nnsim.cli import main
except KeyboardInterrupt:   # Ctrl-C while importing: as quiet as during a command
    sys.exit(130)

sys.exit(main())
