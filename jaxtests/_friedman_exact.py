"""Exact permutation p-values of Friedman's statistic, a batch of tables at a time (numpy).

Under H0 each data set's ranks are shuffled among the learners independently, so
the null of ``S = sum_j R_j^2`` (rank sums ``R_j``) is the law of a sum of independent
uniform arrangements of the rows. It is counted by dynamic programming over the
learners' rank sums, kept sorted: relabelling the learners changes neither ``S`` nor
the uniform law of the next data set's arrangement, so each sorted state stands for
all its relabellings, and the first data set is held in one order. Ranks are doubled
(average ranks are multiples of 1/2), so every state is an exact integer vector.

A batch is counted once per distinct multiset of rows (the order of the data sets does
not matter), and tables whose rows begin alike share the states of their common
prefix: the multisets are walked in sorted order with a stack of prefix states, each
prefix counted once (issue 42.3: a batch of tied tables ran table by table).
"""

import functools
import math

import numpy as np

__all__ = ["EXACT_MAX_WORK", "exact_pvalues", "null_distribution"]

# Most (state, arrangement) pairs one null may count (at most about 2 s of numpy on one core):
# without ties, k = 3 learners up to about 200 data sets, 4 up to 36, 5 up to 12, 6 up to 5,
# 7 up to 3 (ties shorten the count).
EXACT_MAX_WORK = 10_000_000
_MAX_ORDERS = 1 << 17  # orders of one data set (8 untied learners: 40,320): tables of more refused
_CHUNK = 1 << 20  # (state, arrangement) pairs per numpy pass: bounded memory
_RESCALE = 2.0**900  # counts past it are scaled by 2^-900 (exact): no overflow at any N


@functools.lru_cache(maxsize=64)
def _orders(row):
    """The distinct orders of the multiset ``row`` (a sorted tuple), lexicographic, as a
    ``(m, k)`` int64 array; built without visiting the ``k!`` orders of a tied row."""
    values, counts = np.unique(np.asarray(row), return_counts=True)
    out = []

    def extend(prefix, left):
        if len(prefix) == len(row):
            out.append(prefix)
            return
        for i, v in enumerate(values.tolist()):
            if left[i]:
                left[i] -= 1
                extend((*prefix, v), left)
                left[i] += 1

    extend((), counts.tolist())
    return np.asarray(out, np.int64)


def n_orders(row):
    """``k! / prod t!``: the number of distinct orders of ``row`` (``t`` the tie sizes)."""
    m = math.factorial(len(row))
    for t in np.unique(np.asarray(row), return_counts=True)[1].tolist():
        m //= math.factorial(t)
    return m


def _dedupe(states, counts, k):
    """Sum ``counts`` over equal rows of ``states : (M, k)`` (rows sorted)."""
    base = int(states.max(initial=0)) + 1
    if base ** (k - 1) < 2**62:  # the rows' sum is fixed: k - 1 entries identify a state
        code = np.zeros(len(states), np.int64)
        for j in range(k - 1):
            code = code * base + states[:, j]
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(states, axis=0, return_index=True, return_inverse=True)
    return states[first], np.bincount(inv.reshape(-1), weights=counts)


def _step(states, counts, row):
    """States after one more data set ``row``: every state plus every order, sorted, merged."""
    orders = _orders(row)
    m, k = orders.shape
    per = max(1, _CHUNK // m)
    parts_s, parts_c = [], []
    for lo in range(0, len(states), per):
        new = (states[lo : lo + per, None, :] + orders[None]).reshape(-1, k)
        new.sort(axis=1)
        s, c = _dedupe(new, np.repeat(counts[lo : lo + per], m), k)
        parts_s.append(s)
        parts_c.append(c)
    states, counts = _dedupe(np.concatenate(parts_s), np.concatenate(parts_c), k)
    if counts.max() > _RESCALE:
        counts = counts / _RESCALE  # a power of two: exact
    return states, counts


def _last(states, counts, row):
    """The law of ``S`` after the last data set: ``(values, counts)``, values ascending."""
    orders = _orders(row)
    m = len(orders)
    qs = np.sum(states * states, axis=1)
    qa = np.sum(orders * orders, axis=1)
    per = max(1, _CHUNK // m)
    parts_v, parts_c = [], []
    for lo in range(0, len(states), per):
        s = states[lo : lo + per]
        # |s + a|^2 = |s|^2 + |a|^2 + 2 s.a (exact integers), counted on a dense grid
        total = (qs[lo : lo + per, None] + qa[None, :] + 2 * (s @ orders.T)).reshape(-1)
        low = int(total.min())
        c = np.bincount(total - low, weights=np.repeat(counts[lo : lo + per], m))
        nz = np.flatnonzero(c)
        parts_v.append(nz + low)
        parts_c.append(c[nz])
    values, inv = np.unique(np.concatenate(parts_v), return_inverse=True)
    return values, np.bincount(inv.reshape(-1), weights=np.concatenate(parts_c))


def _plan(rows):
    """The order in which a table's rows are counted: the row with most orders first (held
    fixed, its orders cost nothing), then the rest by (number of orders, row)."""
    keyed = sorted(rows, key=lambda r: (n_orders(r), r))
    return (keyed[-1], *keyed[:-1])


def _tails(values, counts):
    """``(values, tails, total)``: tails[i] = weight of ``S >= values[i]``."""
    tails = np.cumsum(counts[::-1])[::-1]
    return values, tails, float(tails[0])


_NULLS = {}  # plan -> (values, tails, total) or None; bounded below
_NULLS_MAX = 4096


def null_distribution(plan, stack=None):
    """Null of ``S`` of the doubled-rank rows ``plan`` (in counting order), or None past
    ``EXACT_MAX_WORK``. Returns ``(values, tails, total)``: the values of ``S``
    ascending, the weight of ``S >= value``, and the total weight (tails over total are
    the p-values). ``stack``, a list, keeps the prefix states between calls of a batch.
    """
    if plan in _NULLS:
        return _NULLS[plan]
    if stack is None:
        stack = []
    # stack[i] = (row, states, counts, work) after the rows plan[: i + 1]
    depth = 0
    while depth < len(stack) and depth < len(plan) - 1 and stack[depth][0] == plan[depth]:
        depth += 1
    del stack[depth:]
    if not stack:
        first = np.asarray(plan[0], np.int64)[None]
        stack.append((plan[0], first, np.ones(1), 0))
    # Refused as soon as the work done plus a lower bound of the rest passes the limit: the
    # number of states never falls (adding the row's ascending order to each ascending state
    # keeps it ascending, so distinct states stay distinct), so each step left costs at least
    # the states now times its row's orders.
    m = [n_orders(row) for row in plan]
    out = None
    while max(m[1:]) <= _MAX_ORDERS:  # else refused: one data set's orders alone too many
        _, states, counts, work = stack[-1]
        i = len(stack)
        if work + len(states) * sum(m[i:]) > EXACT_MAX_WORK:
            break
        if i == len(plan) - 1:
            out = _tails(*_last(states, counts, plan[-1]))
            break
        states, counts = _step(states, counts, plan[i])
        stack.append((plan[i], states, counts, work + len(stack[-1][1]) * m[i]))
    if len(_NULLS) >= _NULLS_MAX:
        _NULLS.pop(next(iter(_NULLS)))
    _NULLS[plan] = out
    return out


def exact_pvalues(ranks):
    """Exact permutation p-values of Friedman's statistic for the tables ``ranks : (..., N,
    k)`` (average ranks): the fraction of the within-data-set arrangements whose ``sum_j
    R_j^2`` reaches the observed one (``chi2_F`` increases with it; the tie correction
    stays). NaN where the count is longer than ``EXACT_MAX_WORK``."""
    from jaxtests._pvalues import sign_test

    doubled = np.rint(2 * np.asarray(ranks)).astype(np.int64)
    n, k = doubled.shape[-2:]
    flat = doubled.reshape(-1, n, k)
    if k == 2:
        # S is increasing in |R_1 - R_2| = 2 |wins - losses| over the untied data sets: the
        # two-sided sign test (Friedman 1937 reduces to it for two learners).
        wins = np.sum(flat[..., 0] < flat[..., 1], axis=-1)
        untied = np.sum(flat[..., 0] != flat[..., 1], axis=-1)
        return sign_test(wins, untied, "two-sided").reshape(ranks.shape[:-2])
    observed = np.sum(flat.sum(axis=1) ** 2, axis=-1)
    # Each row's pattern (its sorted doubled ranks) numbered in lexicographic order; a table
    # is the sorted list of its rows' numbers (the order of the data sets does not matter).
    patterns, codes = np.unique(np.sort(flat, axis=-1).reshape(-1, k), axis=0, return_inverse=True)
    patterns = [tuple(r) for r in patterns.tolist()]
    tables, inverse = np.unique(
        np.sort(codes.reshape(len(flat), n), axis=-1), axis=0, return_inverse=True
    )
    plans = [_plan([patterns[c] for c in t]) for t in tables.tolist()]
    # the tables of each distinct multiset, grouped
    order = np.argsort(inverse.reshape(-1), kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(inverse.reshape(-1)))])
    p = np.full(len(flat), np.nan)
    stack = []
    for u in sorted(range(len(plans)), key=plans.__getitem__):  # shared prefixes adjacent
        null = null_distribution(plans[u], stack)
        if null is None:
            continue
        values, tails, total = null
        members = order[bounds[u] : bounds[u + 1]]
        at = np.searchsorted(values, observed[members], side="left")
        p[members] = tails[at] / total
    return p.reshape(ranks.shape[:-2])
