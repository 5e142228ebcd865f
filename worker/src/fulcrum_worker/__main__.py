"""`python -m fulcrum_worker ...` (as `torchrun -m fulcrum_worker run ...` starts each process): the CLI."""

import sys

from .cli import main

sys.exit(main())
