"""``python -m perfport``."""

import sys

from perfport.cli import main

if __name__ == "__main__":
    sys.exit(main())
