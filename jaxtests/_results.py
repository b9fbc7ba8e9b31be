"""Result objects: frozen dataclasses registered as JAX pytrees.

Arrays are data fields (they flow through ``jit``/``tree_map``); configuration
(``method``, ``alternative``, ``seed``...) are static fields, marked with
``static_field()``. Derived quantities are methods, as in scipy's results.

Concrete array fields are stored as numpy, as scipy returns them: a 0-d array becomes
a numpy scalar (``np.float64``, ``np.int64``...), so ``r.pvalue < 0.05``, ``float()``,
f-strings and ``json.dumps`` work in and out of x64 (a float64 JAX array outside x64
warns in every comparison, and JSON refuses it). Tracers (inside ``jit``/``vmap``)
are left as they are, so results still flow through JAX transformations.
"""

import copy
import dataclasses
import inspect
from typing import NamedTuple

import jax
import numpy as np

__all__ = ["ConfidenceInterval", "PermutationFields", "format_value", "result", "static_field"]


class ConfidenceInterval(NamedTuple):
    """Lower and upper confidence bounds, each of the batch shape (scipy's
    ``ConfidenceInterval``): every interval of jaxtests is one, whether an attribute
    (``BootstrapResult.confidence_interval``, as scipy's ``bootstrap``;
    ``DeLongResult``, ``DeLongIntervalResult``, ``clopper_pearson``...) or a method with a
    ``confidence_level`` (``TtestResult.confidence_interval()``, as scipy's t tests).
    A one-sided interval has ``-inf`` or ``inf`` on its open side.
    """

    low: np.ndarray
    high: np.ndarray


_UNPACKED = ("statistic", "pvalue")


def static_field(**kwargs):
    """A dataclass field that is pytree metadata (hashable, not traced)."""
    metadata = dict(kwargs.pop("metadata", {}))
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


class Fields:
    """A set of result fields that several result classes share, declared once.

    Subclass it with annotated fields, all with defaults; a ``@result`` class that
    inherits it gains them after its own fields without a default and before its own
    defaulted ones (a dataclass base would put them first), so its repr, ``__init__``
    and pytree order read as if they were written in the class.
    """


class PermutationFields(Fields):
    """The fields of a parametric test's result that ``method="permutation"`` fills.

    Attributes
    ----------
    pvalue_interval : array ``(..., 2)`` or None
        99% Clopper-Pearson interval for the p-value of infinitely many draws (Monte
        Carlo), ``(pvalue, pvalue)`` when exact.
    n_resamples : int or None
        Resamples evaluated (all of them when exact, 0 for the closed-form binomial null).
    seed : int, tuple or None
        The seed that repeats the draws (None when exact).
    permutation_method : str or None
        The engine's "exact", "monte-carlo" or "binomial" (see :func:`jaxtests.signflip_test`).
    """

    pvalue_interval: jax.Array | None = None
    n_resamples: int | None = static_field(default=None)
    seed: object = static_field(default=None)
    permutation_method: str | None = static_field(default=None)


def _has_default(cls, name):
    value = cls.__dict__.get(name, dataclasses.MISSING)
    if isinstance(value, dataclasses.Field):
        return value.default is not dataclasses.MISSING or (
            value.default_factory is not dataclasses.MISSING
        )
    return value is not dataclasses.MISSING


def _splice_fields(cls):
    """Write the fields of ``cls``'s :class:`Fields` bases into its own annotations,
    after its last field without a default."""
    own = inspect.get_annotations(cls)
    shared = {}
    for base in reversed(cls.__mro__[1:]):
        if issubclass(base, Fields) and not dataclasses.is_dataclass(base):
            for name, kind in inspect.get_annotations(base).items():
                if name not in own and name not in shared:
                    shared[name] = kind
                    # dataclass() writes into the Field it reads: each class gets a copy
                    setattr(cls, name, copy.copy(base.__dict__[name]))
    if not shared:
        return
    names = list(own)
    cut = max((i + 1 for i, n in enumerate(names) if not _has_default(cls, n)), default=0)
    cls.__annotations__ = (
        {n: own[n] for n in names[:cut]} | shared | {n: own[n] for n in names[cut:]}
    )


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


def _to_numpy(v):
    """A concrete JAX array as numpy, a 0-d array (JAX's or numpy's) as a numpy scalar.

    Tracers, typed PRNG keys and non-array leaves (None, the placeholders JAX's tree
    utilities pass while unflattening) are returned as they are.
    """
    if isinstance(v, np.ndarray):
        return v[()] if v.ndim == 0 else v
    if not isinstance(v, jax.Array) or isinstance(v, jax.core.Tracer):
        return v
    if jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key):
        return v
    a = np.asarray(v)
    return a[()] if a.ndim == 0 else a


def _post_init(self):
    for name in type(self)._data_fields:
        v = getattr(self, name)
        w = _to_numpy(v)
        if w is not v:
            object.__setattr__(self, name, w)


def _iter(self):
    return iter((self.statistic, self.pvalue))


def _len(self):
    return 2


def _getitem(self, i):
    return (self.statistic, self.pvalue)[i]


def to_dict(self):
    """The fields as a JSON-ready dict: Python floats, ints and nested lists, NaN and
    ±inf as None (strict JSON, as the command line's ``--json``)."""
    from jaxtests._report import jsonable

    return jsonable(self)


def to_json(self, **kwargs):
    """Strict JSON text of :meth:`to_dict` (keyword arguments go to ``json.dumps``)."""
    import json

    kwargs.setdefault("allow_nan", False)
    return json.dumps(self.to_dict(), **kwargs)


def result(cls):
    """Class decorator: frozen dataclass, pytree registration, readable repr.

    Fields declared with ``static_field()`` become pytree metadata; all others
    are data, stored as numpy when concrete (module docstring). ``statistic`` and
    ``pvalue`` should come first, as in scipy: a result with both unpacks as
    ``statistic, pvalue = result`` (``result[0]``, ``result[1]``), as scipy's do.
    Every result gains ``to_dict()`` and ``to_json()``.
    """
    _splice_fields(cls)
    own_post_init = cls.__dict__.get("__post_init__")
    if own_post_init is None:
        cls.__post_init__ = _post_init
    else:

        def __post_init__(self):
            _post_init(self)
            own_post_init(self)

        cls.__post_init__ = __post_init__
    # dataclass() makes __init__ call __post_init__ only when it exists beforehand.
    cls = dataclasses.dataclass(frozen=True, repr=False)(cls)
    fields = dataclasses.fields(cls)
    data = [f.name for f in fields if not f.metadata.get("static", False)]
    meta = [f.name for f in fields if f.metadata.get("static", False)]
    jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)
    cls._data_fields = tuple(data)
    if all(n in data for n in _UNPACKED):
        cls.__iter__, cls.__len__, cls.__getitem__ = _iter, _len, _getitem
    # a class's own or inherited to_dict (e.g. the studies') wins; to_json serialises it
    if not hasattr(cls, "to_dict"):
        cls.to_dict = to_dict
    if not hasattr(cls, "to_json"):
        cls.to_json = to_json
    if "__repr__" not in cls.__dict__ or cls.__repr__ is object.__repr__:
        cls.__repr__ = _repr
    return cls
