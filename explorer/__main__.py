"""``python -m explorer`` is the ``kafka-mc`` command."""

from explorer.cli import main

main()
