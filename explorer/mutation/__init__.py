"""The mutation harness, ``kafka-mc mutate``: the command and its workers (``command``), source
mutants generated from a model's syntax tree and their stable keys (``source``), the statements
each suite entry executes (``line_coverage``), the ``--results`` file (``results``) and the kill
matrix's score (``score``). See ``docs/mutation.md``.
"""
