"""Package discovery: every package under ``jaxtests/``, and ``kernels/`` as ``jaxtests.kernels``.

The rest of the metadata is in ``pyproject.toml``. Discovery is here, not in a hand-written
list there, because ``kernels/`` is installed under another name (``package-dir``), which
``[tool.setuptools.packages.find]`` cannot express; a hand list once left out a subpackage
(``jaxtests._plotting``) and broke every regular install.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["jaxtests", "jaxtests.*"]),
        *(f"jaxtests.{p}" for p in find_packages(include=["kernels", "kernels.*"])),
    ]
)
