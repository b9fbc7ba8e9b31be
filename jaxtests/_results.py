"""Result objects: frozen dataclasses registered as JAX pytrees.

Arrays are data fields (they flow through ``jit``/``tree_map``); configuration
(``method``, ``alternative``, ``seed``...) are static fields, marked with
``static_field()``. Derived quantities are methods, as in scipy's results.
"""

import dataclasses

import jax
import numpy as np

__all__ = ["format_value", "result", "static_field"]


def static_field(**kwargs):
    """A dataclass field that is pytree metadata (hashable, not traced)."""
    metadata = dict(kwargs.pop("metadata", {}))
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


def format_value(v):
    """Short, paper-ready text for a field value."""
    if isinstance(v, jax.core.Tracer):
        return f"<traced {v.shape}>"
    if isinstance(v, jax.Array | np.ndarray | np.generic):
        a = np.asarray(v)
        if a.ndim == 0:
            return _fmt_scalar(a.item())
        if a.size <= 8:
            return (
                "["
                + ", ".join(_fmt_scalar(x) for x in a.ravel().tolist())
                + "]"
                + ("" if a.ndim == 1 else f" (shape {a.shape})")
            )
        return f"array(shape={a.shape}, dtype={a.dtype})"
    if isinstance(v, float):
        return _fmt_scalar(v)
    if isinstance(v, tuple) and v and all(isinstance(x, float) for x in v):
        return "(" + ", ".join(_fmt_scalar(x) for x in v) + ")"
    return repr(v)


def _fmt_scalar(x):
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return f"{x:.6g}"
    return repr(x)


def _repr(self):
    parts = []
    for f in dataclasses.fields(self):
        if not f.repr:
            continue
        v = getattr(self, f.name)
        if v is None and f.default is None:
            continue
        parts.append(f"{f.name}={format_value(v)}")
    return f"{type(self).__name__}(" + ", ".join(parts) + ")"


def result(cls):
    """Class decorator: frozen dataclass, pytree registration, readable repr.

    Fields declared with ``static_field()`` become pytree metadata; all others
    are data. ``statistic`` and ``pvalue`` should come first, as in scipy.
    """
    cls = dataclasses.dataclass(frozen=True, repr=False)(cls)
    fields = dataclasses.fields(cls)
    data = [f.name for f in fields if not f.metadata.get("static", False)]
    meta = [f.name for f in fields if f.metadata.get("static", False)]
    jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)
    if "__repr__" not in cls.__dict__ or cls.__repr__ is object.__repr__:
        cls.__repr__ = _repr
    return cls
