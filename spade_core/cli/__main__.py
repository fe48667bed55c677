import sys

from spade_core.cli import main

sys.exit(main())
