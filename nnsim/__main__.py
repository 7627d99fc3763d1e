import sys

from nnsim.cli import main

sys.exit(main())
