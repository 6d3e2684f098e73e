"""Kafka's controller and timing components as deterministic transition systems.

Nothing here does I/O, uses randomness or a clock, or knows an engine.
"""

# The finder that chooses between the mypyc-compiled modules and their sources
# (explorer/native.py) is installed by explorer/__init__.py: it must be in place before any
# module of this package is imported, or a stale compiled module would load unchecked.
import explorer.core  # noqa: F401
