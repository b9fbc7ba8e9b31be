"""Sphinx configuration of the jaxtests documentation.

Build with ``.venv/bin/sphinx-build -W -b html docs docs/_build/html``; nothing here runs the
demo or any test (the figures are committed PNGs, drawn by ``docs/make_figures.py``).
"""

import os

import jaxtests

project = "jaxtests"
author = "The jaxtests developers"
copyright = "2026, The jaxtests developers"
version = release = jaxtests.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "make_figures.py"]
myst_heading_anchors = 3

# One page per public name, generated at build time (api/generated/ is not committed).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
# The result classes list their fields and methods in their own docstrings; numpydoc's
# automatic member tables would need a stub page per dataclass field.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"jaxtests {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# A build must not reach the network (CI and fresh clones may be offline).
intersphinx_mapping = {}
os.environ.setdefault("JAXTESTS_CACHE_DIR", "off")  # importing jaxtests compiles nothing anyway
