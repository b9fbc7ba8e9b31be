"""Shape buckets: pad data axes to a short ladder of sizes so new sizes reuse compiled programs.

A jitted program compiles once per input shape. The public tests pad their
instance, fold and sample axes up to the next size of :data:`LADDER` (powers
of two and 1.5 times powers of two: at most 1.5x the work) and pass the true
size, or a mask, as a traced value, so any size inside a compiled bucket runs
without compiling. The Monte Carlo engine's fused sums go further: their
loops stop at the live words (a traced count), so their data is padded to a
few large capacities (:func:`capacity_words`) and one program serves every
size up to 16,384 instances, then up to 262,144. Padding never changes a
result: padded entries are zeros that add nothing to a sum, or are masked out.
"""

import numpy as np

__all__ = [
    "CAPACITY_WORDS",
    "LADDER",
    "bucket",
    "capacity_words",
    "fine_bucket",
    "pad_axis",
    "pad_last",
]

# 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, ... up to 3 * 2^40.
LADDER = tuple(sorted({1, *(2**k for k in range(42)), *(3 * 2**k for k in range(41))}))

# Monte Carlo engine programs whose loops stop at the live words (the fused sign-flip and
# two-sample sums): their data is padded to one of these capacities (words of 32
# instances: 16,384 and 262,144 instances), so one program serves every size up to it.
CAPACITY_WORDS = (2**9, 2**13)
CAPACITY_ELEMENTS = 2**20  # hypotheses x capacity beyond this: the fine ladder instead


def bucket(n, minimum=1):
    """The smallest ladder size ``>= max(n, minimum)``."""
    n = max(int(n), int(minimum))
    return LADDER[int(np.searchsorted(LADDER, n))]


def fine_bucket(n):
    """The smallest ``k 2^j >= n`` with ``8 <= k < 16`` (``n`` itself below 16): at most
    1/8 more than ``n``, for programs whose run time follows the padded size (the fits of
    ``permutation_test_score``, run for every permutation)."""
    n = int(n)
    q = 2 ** max(0, n.bit_length() - 4)
    return q * -(-n // q)


def capacity_words(n, n_h=1):
    """Words (of 32 instances) a fused Monte Carlo program holds for ``n`` instances.

    The smallest of :data:`CAPACITY_WORDS` that holds ``n``, while ``n_h``
    hypotheses at that capacity stay within :data:`CAPACITY_ELEMENTS` values
    (padding costs memory and one pass of the preparation, never draws: the
    draw loops run over the live words); else the ladder's bucket of the words.
    """
    words = -(-int(n) // 32)
    for cap in CAPACITY_WORDS:
        if cap >= words:
            if n_h * 32 * cap <= CAPACITY_ELEMENTS:
                return cap
            break
    return bucket(words)


def pad_axis(x, size, axis=-1, value=0):
    """``x`` (numpy) padded with ``value`` at the end of ``axis`` to ``size`` entries."""
    x = np.asarray(x)
    extra = size - x.shape[axis]
    if extra < 0:
        raise ValueError(f"cannot pad an axis of {x.shape[axis]} entries to {size}")
    if extra == 0:
        return x
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, extra)
    return np.pad(x, widths, constant_values=value)


def pad_last(*arrays, minimum=1, axis=-1):
    """Arrays padded with zeros on ``axis`` (default the last) to ``bucket(n)``, and a mask.

    Returns ``(*padded, where)`` with ``where : (bucket,)`` bool, True on the real
    entries. Traced arrays (under the caller's ``jit``, which compiles for their
    shape anyway) come back as they are with ``where=None``.
    """
    import jax

    if any(isinstance(a, jax.core.Tracer) for a in arrays):
        return (*arrays, None)
    n = np.shape(arrays[0])[axis]
    size = bucket(n, minimum)
    return (*(pad_axis(a, size, axis=axis) for a in arrays), np.arange(size) < n)
