"""jaxtests: statistical tests for comparing learning algorithms, on JAX.

Public API re-exports only; see the submodules for documentation.
"""

from jaxtests import losses, measures

__all__ = ["losses", "measures"]

__version__ = "0.1.0"
