"""Kafka's controller and timing components as deterministic transition systems.

Nothing here does I/O, uses randomness or a clock, or knows an engine.
"""
