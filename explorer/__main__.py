"""``python -m explorer`` is the ``kafka-mc`` command."""

from explorer._entry import main

main()
