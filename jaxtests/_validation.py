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

from jaxtests.kernels import statistics as kstatistics

__all__ = [
    "as_class_labels",
    "as_float_array",
    "as_int_scalar",
    "as_label_array",
    "binary_classes",
    "check_alternative",
    "check_choice",
    "check_covariance",
    "check_finite",
    "check_probability",
    "check_rcond",
    "check_same_shape",
    "is_concrete",
    "normalize_axis",
    "rescale_pow2",
    "scale_back",
    "to_device",
]

ALTERNATIVES = ("two-sided", "less", "greater")
# Below this reciprocal condition number of the correlation matrix, a covariance is
# treated as singular: collinear measures computed in float64 land near 1e-16.
RCOND_TOL = 1e-10


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
    dtype = _float_dtype()
    if isinstance(arr, np.ndarray):
        # Convert on the host: a converting jnp.asarray compiles a program per shape.
        return to_device(arr.astype(np.dtype(dtype), copy=False))
    return jnp.asarray(arr, dtype=dtype)


def to_device(a):
    """A numpy array as a JAX array on the default device, compiling nothing.

    ``jnp.asarray`` of a numpy array compiles a small program per shape in JAX 0.10
    ("stage", 5-10 ms each, dozens in a first call); ``jax.device_put`` transfers it.
    Anything else goes through ``jnp.asarray``.
    """
    if isinstance(a, np.ndarray | np.generic):
        return jax.device_put(a)
    return jnp.asarray(a)


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
    if is_concrete(arr):
        a = np.asarray(arr)
        check_finite(a.astype(float) if a.dtype.kind == "f" else a, name)
        vals = np.unique(a)
        # On the host, and jnp.asarray with a dtype: eager jnp arithmetic (and, in
        # jax 0.10, jnp.asarray of a numpy array without one) compiles a program per shape.
        # The dtype conversion too: a converting jnp.asarray compiles a program per shape.
        dtype = _float_dtype()
        if np.all(np.isin(vals, (-1, 1))):
            return to_device(a.astype(np.dtype(dtype)))
        if np.all(np.isin(vals, (0, 1))):
            return to_device((2.0 * a.astype(np.float64) - 1.0).astype(dtype))
        bad = vals[~np.isin(vals, (-1, 0, 1))]
        shown = bad[0].item() if bad.size else vals.tolist()
        raise ValueError(
            f"`{name}` must hold binary labels in {{-1, +1}} or {{0, 1}}; found value {shown!r}"
            f" (all values: {vals.tolist()[:6]}{'...' if vals.size > 6 else ''})."
        )
    return jnp.asarray(arr, dtype=_float_dtype())


def as_class_labels(y, name):
    """Validate classification labels: binary as :func:`as_label_array`, else multiclass.

    Returns ``(labels, classes)``. Two or fewer distinct values: ``labels`` is
    a float ±1 array and ``classes`` is None; {-1, +1}, {0, 1} and bools as
    :func:`as_label_array`, any other two values (strings, {1, 2}) as
    scikit-learn's ``LabelBinarizer``: the later of the two sorted values is the
    positive class +1, the earlier -1 (:func:`binary_classes` names them). Three or
    more distinct values (integers, integer-valued floats, bools or strings): ``classes`` is the
    tuple of the sorted distinct values and ``labels`` their float indices
    ``0 .. C - 1`` (scikit-learn's ``LabelEncoder``). Concrete 1-d input only.
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-dimensional, got shape {tuple(arr.shape)}.")
    kind = arr.dtype.kind
    if kind not in "biufUSO":
        raise TypeError(f"`{name}` must hold class labels (numbers or strings), got {arr.dtype}.")
    if kind in "fc":
        check_finite(arr, name)
    if kind == "O" and any(v is None or (isinstance(v, float) and v != v) for v in arr):
        raise ValueError(f"`{name}` holds a missing label (None or NaN).")
    try:
        classes = np.unique(arr)
    except TypeError:
        raise TypeError(f"`{name}` mixes label types that cannot be sorted.") from None
    if classes.size == 2 and not _standard_binary(classes):
        _check_integral(classes, kind, name)
        # scikit-learn's rule: the later of the sorted classes is the positive one
        return jnp.asarray(np.where(arr == classes[1], 1.0, -1.0), dtype=_float_dtype()), None
    if classes.size <= 2:
        return as_label_array(arr, name), None
    _check_integral(classes, kind, name)
    codes = np.searchsorted(classes, arr).astype(np.float64)
    return jnp.asarray(codes, dtype=_float_dtype()), tuple(v.item() for v in classes)


def _standard_binary(classes):
    """Whether sorted distinct labels are a subset of {-1, +1} or {0, 1} (bools too)."""
    if classes.dtype.kind not in "biuf":
        return False
    return bool(np.all(np.isin(classes, (-1, 1))) or np.all(np.isin(classes, (0, 1))))


def binary_classes(y):
    """``(negative, positive)``: the two labels of binary ``y`` as given (strings, {1, 2},
    {-1, +1}, {0, 1}...), the later of the sorted values positive; None otherwise."""
    classes = np.unique(np.asarray(y))
    if classes.size != 2:
        return None
    return tuple(v.item() for v in classes)


def _check_integral(classes, kind, name):
    """Refuse non-integer float class labels (a real target needs a regressor)."""
    if kind == "f" and np.any(classes != np.round(classes)):
        bad = classes[classes != np.round(classes)][0].item()
        raise ValueError(
            f"`{name}` holds {classes.size} distinct values including {bad!r}: class labels "
            "must be integers or strings (real targets need a regressor)."
        )


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


def rescale_pow2(*arrays, dtype=None):
    """Scale ``arrays`` by one power of two so that their largest ``|x|`` is moderate.

    XLA:CPU flushes subnormal floats to zero, and squares of values below about 1e-154
    underflow, so the t, F and T² kernels return inf or NaN on data of tiny magnitude
    (``1e-320``, or ``1e-160`` squared) and overflow on huge ones. Multiplying by
    ``2^-e`` (``e`` from ``numpy.frexp`` of the largest ``|x|``, computed on the host) is
    exact, and every scale-invariant statistic (t, F, T², Wilks' Lambda, p-values) is
    unchanged by it, bit for bit. Returns ``(factor, *scaled)``; :func:`scale_back` a
    statistic measured in the data's units (a mean difference: ``power=1``, a sum of
    squares: ``power=2``) to report it in the original units.

    Arrays whose largest ``|x|`` already lies within ``[tiny^(1/4), max^(1/4)]`` of
    ``dtype`` (default: theirs; ``[1.2e-77, 1.3e77]`` in float64, ``[3.3e-10, 4.3e9]``
    for ``numpy.float32``, the permutation engine's sums), traced arrays and all-zero
    arrays are returned as they are with ``factor = 1.0``: ordinary data are never
    touched. Otherwise the largest ``|x|`` becomes ``[1, 2)``.
    """
    if not arrays or not all(is_concrete(a) for a in arrays):
        return (1.0, *arrays)
    hosts = [np.asarray(a) for a in arrays]
    if any(h.dtype.kind != "f" or h.size == 0 for h in hosts):
        return (1.0, *arrays)
    big = max(float(np.max(np.abs(h))) for h in hosts)
    info = np.finfo(np.result_type(*hosts) if dtype is None else dtype)
    if (
        big == 0
        or not np.isfinite(big)
        or float(info.tiny) ** 0.25 <= big <= float(info.max) ** 0.25
    ):
        return (1.0, *arrays)
    e = int(np.frexp(big)[1]) - 1  # largest |x| -> [1, 2); 2^e is a finite float
    factor = float(np.ldexp(1.0, e))
    # On the host: numpy keeps subnormal inputs, which XLA:CPU would flush before scaling.
    scaled = [jnp.asarray(np.ldexp(h, -e), dtype=a.dtype) for h, a in zip(hosts, arrays)]
    return (factor, *scaled)


def scale_back(x, factor, power=1):
    """``x * factor**power`` for the power of two ``factor`` of :func:`rescale_pow2`,
    computed on the host (the result may be subnormal, which XLA:CPU would flush, or
    overflow to inf, as the data's own sum of squares would), as a float64 JAX array;
    ``x`` unchanged when ``factor == 1``."""
    if factor == 1 or x is None or not is_concrete(x):
        return x
    e = (int(np.frexp(factor)[1]) - 1) * power
    with np.errstate(over="ignore", under="ignore"), jax.enable_x64(True):
        return jnp.asarray(np.ldexp(np.asarray(x, dtype=np.float64), e))


def check_rcond(rcond, what, names, remedy):
    """Raise ``ValueError`` where the reciprocal condition number ``rcond`` (any batch
    shape, from :func:`jaxtests.kernels.statistics.correlation_rcond`) is at most
    ``RCOND_TOL``: the covariance described by ``what`` is singular (concrete only)."""
    if not is_concrete(rcond):
        return
    r = np.asarray(rcond)
    bad = ~(r > RCOND_TOL)
    if not bad.any():
        return
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if r.ndim else ()
    where = ""
    if r.ndim:
        shown = idx[0] if len(idx) == 1 else idx
        where = f" (batch index {shown}; {int(bad.sum())} of {r.size} tests)"
    measures = f" over measures {list(names)}" if names else ""
    raise ValueError(
        f"{what} is singular{measures}{where}: reciprocal condition number "
        f"{float(r[idx]):.3g} <= {RCOND_TOL:g}. A measure is constant or the measures are "
        "collinear (e.g. error together with tpr and fpr, or tp, fn, fp, tn that sum to the "
        f"fold size). {remedy} "
        "A pseudo-inverse would give a meaningless statistic."
    )


@jax.jit
def _paired_rcond(d):
    return kstatistics.correlation_rcond(kstatistics.covariance(d), jnp.max(jnp.abs(d), axis=-2))


def check_covariance(d, name, remedy="Drop a redundant measure or use more rows."):
    """Refuse ``d : (..., m, p)`` whose covariance over the ``m`` rows is singular, as
    the paired Hotelling T² does (the same rcond test; concrete arrays only)."""
    if not is_concrete(d):
        return
    m, p = d.shape[-2], d.shape[-1]
    if m <= p:
        raise ValueError(
            f"`{name}` has {m} rows for {p} measures: the covariance of {p} measures needs "
            f"more rows than measures (m > p), else it is singular. {remedy}"
        )
    check_rcond(_paired_rcond(d), f"The covariance of `{name}`", None, remedy)
