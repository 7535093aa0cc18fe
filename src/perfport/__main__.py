"""``python -m perfport`` and the ``perfport`` command (pyproject's console script)."""

import sys


def main() -> int:
    """The command line. A Ctrl-C while its modules load (the first third of a second)
    comes before perfport.cli.main can handle it: end it here as main does, not with a
    traceback."""
    try:
        from perfport.cli import main as run

        return run()
    except KeyboardInterrupt:
        print("perfport: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
