"""Counterexample-quality tests (marker ``quality``): simulation finds, shrinking minimises."""
