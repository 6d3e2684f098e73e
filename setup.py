"""Build hook for the optional C accelerator ``explorer._speedups``.

All project metadata lives in pyproject.toml; this file only declares the extension,
because ``ext-modules`` in pyproject.toml needs setuptools >= 74.1 (and is marked
experimental there). ``optional=True``: if the compiler is missing or the build
fails, setuptools prints a warning and the install goes on without it, and
``explorer.speedups`` uses its pure-Python fallbacks.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "explorer._speedups",
            sources=["explorer/_speedups.c"],
            optional=True,
        ),
        # incremental property checking's slice masks (explorer/search/incremental.py)
        Extension(
            "explorer._incremental",
            sources=["explorer/_incremental.c"],
            optional=True,
        ),
    ]
)
