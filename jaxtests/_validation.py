"""Input validation shared by every public function.

Each helper names the offending argument in backticks and says what is wrong.
Value checks (finiteness, label sets) run only on concrete arrays: under
``jit``/``vmap`` the inputs are tracers and only shapes and dtypes are checked,
so the public functions stay traceable.
"""

import numbers

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "as_float_array",
    "as_int_scalar",
    "as_label_array",
    "check_alternative",
    "check_choice",
    "check_finite",
    "check_probability",
    "check_same_shape",
    "is_concrete",
    "normalize_axis",
]

ALTERNATIVES = ("two-sided", "less", "greater")


def is_concrete(x):
    """True when ``x`` holds values we can inspect (not a tracer)."""
    return not isinstance(x, jax.core.Tracer)


def _float_dtype():
    return jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def as_float_array(x, name, *, ndim=None, min_ndim=None, allow_empty=False, finite=True):
    """Validate ``x`` as a real array and return it as a float JAX array.

    Integers and bools are promoted to float (a lossless widening); strings,
    objects and complex numbers are a ``TypeError``. In float64 mode the
    result is float64; float32 inputs are kept as float32 only when x64 is off.
    """
    if isinstance(x, jax.core.Tracer):
        arr = x
    else:
        try:
            arr = np.asarray(x) if not isinstance(x, jax.Array) else x
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"`{name}` must be an array of numbers: {exc}") from None
    kind = np.dtype(arr.dtype).kind if not _is_key(arr) else "V"
    if kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers, got dtype {arr.dtype}.")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-dimensional, got shape {tuple(arr.shape)}.")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(
            f"`{name}` must have at least {min_ndim} dimension(s), got shape {tuple(arr.shape)}."
        )
    if not allow_empty and arr.size == 0:
        raise ValueError(f"`{name}` is empty (shape {tuple(arr.shape)}).")
    if finite:
        check_finite(arr, name)
    if kind == "f" and not jax.config.jax_enable_x64:
        return jnp.asarray(arr)
    return jnp.asarray(arr, dtype=_float_dtype())


def _is_key(arr):
    return jax.dtypes.issubdtype(arr.dtype, jax.dtypes.prng_key)


def check_finite(x, name):
    """Raise ``ValueError`` naming the first NaN/inf entry of ``x`` (concrete only)."""
    if not is_concrete(x):
        return
    a = np.asarray(x)
    if a.dtype.kind != "f":
        return
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = idx[0] if len(idx) == 1 else idx
        what = "NaN" if np.isnan(a[idx]) else "inf"
        raise ValueError(f"`{name}` contains {what} at index {where}; remove or impute it first.")


def as_label_array(y, name, *, allow_empty=False):
    """Validate binary labels in {-1, +1} or {0, 1}; return them as float ±1.

    The mapping is 0 -> -1 and 1 -> +1, so the positive class is always +1.
    """
    if isinstance(y, jax.core.Tracer):
        arr = y
    else:
        arr = np.asarray(y) if not isinstance(y, jax.Array) else y
    if np.dtype(arr.dtype).kind not in "biuf":
        raise TypeError(
            f"`{name}` must hold numeric labels in {{-1, +1}} or {{0, 1}}, got dtype {arr.dtype}."
        )
    if not allow_empty and arr.size == 0:
        raise ValueError(f"`{name}` is empty (shape {tuple(arr.shape)}).")
    out = jnp.asarray(arr, dtype=_float_dtype())
    if is_concrete(arr):
        a = np.asarray(arr)
        check_finite(a.astype(float) if a.dtype.kind == "f" else a, name)
        vals = np.unique(a)
        if np.all(np.isin(vals, (-1, 1))):
            return out
        if np.all(np.isin(vals, (0, 1))):
            return 2.0 * out - 1.0
        bad = vals[~np.isin(vals, (-1, 0, 1))]
        shown = bad[0].item() if bad.size else vals.tolist()
        raise ValueError(
            f"`{name}` must hold binary labels in {{-1, +1}} or {{0, 1}}; found value {shown!r}"
            f" (all values: {vals.tolist()[:6]}{'...' if vals.size > 6 else ''})."
        )
    return out


def check_same_shape(a, b, name_a, name_b):
    """Raise ``ValueError`` unless ``a`` and ``b`` have identical shapes."""
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"`{name_a}` and `{name_b}` must have the same shape, got {tuple(a.shape)} and "
            f"{tuple(b.shape)}."
        )


def check_choice(value, name, options):
    """Raise ``ValueError`` unless ``value`` is one of ``options``."""
    if value not in options:
        opts = ", ".join(repr(o) for o in options)
        raise ValueError(f"`{name}` must be one of {opts}; got {value!r}.")
    return value


def check_alternative(alternative):
    """Validate scipy's ``alternative`` argument."""
    return check_choice(alternative, "alternative", ALTERNATIVES)


def as_int_scalar(value, name, *, minimum=None):
    """Validate a Python integer (bools and floats are refused, not truncated)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__} {value!r}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}, got {value}.")
    return value


def check_probability(value, name, *, open_interval=True):
    """Validate a level such as ``confidence_level`` in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    v = float(value)
    ok = 0.0 < v < 1.0 if open_interval else 0.0 <= v <= 1.0
    if not ok or not np.isfinite(v):
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"`{name}` must lie in {interval}, got {value!r}.")
    return v


def normalize_axis(axis, ndim, name="axis"):
    """Return a non-negative axis index for an array of ``ndim`` dimensions."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(axis).__name__}.")
    if not -ndim <= axis < ndim:
        raise ValueError(f"`{name}`={axis} is out of range for an array with {ndim} dimension(s).")
    return int(axis) % ndim


def as_names(names, n, name="names"):
    """Validate ``names`` as ``n`` distinct labels; return a tuple of str (None -> None)."""
    if names is None:
        return None
    if isinstance(names, str):
        raise TypeError(f"`{name}` must be a sequence of {n} labels, got a single string.")
    try:
        out = tuple(str(v) for v in names)
    except TypeError:
        raise TypeError(
            f"`{name}` must be a sequence of labels, got {type(names).__name__}."
        ) from None
    if len(out) != n:
        raise ValueError(f"`{name}` must have {n} entries, got {len(out)}.")
    if len(set(out)) != n:
        raise ValueError(f"`{name}` must be distinct, got {list(out)}.")
    return out
