"""The release's report: the run's page and one page per entry (``page``), their SVG diagrams
(``svg``), what a model may say about drawing it (``layout``), the history of runs kept in the
report folder with what changed since the previous run (``history``), and the mutation score
section (``mutation``). Everything a page shows is escaped (``docs/security.md``).
"""
