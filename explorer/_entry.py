"""The ``kafka-mc`` console script: the CLI behind a guard for its own start-up.

:func:`explorer.cli.main` turns SIGINT into a partial result (exit 3), but only once the
CLI is imported; a Ctrl-C that lands while Python imports the CLI and the models (the
first tenth of a second) would print Python's traceback. This module imports nothing
heavy, so the guard is in place before any of that work starts: an interrupt during
start-up ends the command with the CLI's one line and exit 3.

>>> callable(main)
True
"""

from __future__ import annotations

import signal
import sys
import time

__all__ = ["main"]


def main() -> None:
    """Run ``kafka-mc`` with the arguments of the process; exits with the CLI's exit code.

    >>> main.__module__  # the console script ``kafka-mc = "explorer._entry:main"``
    'explorer._entry'
    """
    start = time.monotonic()
    try:
        from explorer.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        print(f"kafka-mc: interrupted by SIGINT after {time.monotonic() - start:.1f} s", file=sys.stderr)
        sys.exit(3)
    finally:
        # the exit code is decided and the answer printed: a SIGINT while the interpreter then
        # shuts down (freeing a large visited set can take seconds) would meet the default
        # action Python restores at shutdown and end the process by the signal instead
        signal.signal(signal.SIGINT, signal.SIG_IGN)
