"""`python -m tokenizer ...`: the command line (tokenizer/cli)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
