"""``CVResult``'s tests of per-fold values (a mixin of :class:`jaxtests.CVResult`).

Each test method reaches its public test through its row of :data:`_CV_TESTS`
(``CVResult._test``): the function, the designs it refuses, what it names.
"""

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxtests import _direction
from jaxtests._anova import anova, manova
from jaxtests._cv_docs import cv_doc
from jaxtests._hotelling import hotelling_t2
from jaxtests._posthoc import posthoc
from jaxtests._precision import x64
from jaxtests._signflip import signflip_test
from jaxtests._ttests import ftest_5x2cv, ttest_5x2cv, ttest_corrected, ttest_paired
from jaxtests._validation import as_names

__all__ = ["FoldTests"]


class _CVTest(NamedTuple):
    """How a ``CVResult`` test method reaches its test: see ``CVResult._test``."""

    function: Callable  # the public ``jaxtests`` function called
    design: str = "any"  # "independent": refuse pooled repetitions; "5x2": FiveByTwo() only
    alternative: str | None = None  # what the pooling refusal suggests instead
    names_from: str | None = None  # the result's ``names`` come from here, not from kwargs
    measures: bool = False  # takes a sequence of measure names


_PER_REPETITION = "one test per repetition"

_CV_TESTS = {
    "ttest_paired": _CVTest(ttest_paired, "independent"),
    "ttest_5x2cv": _CVTest(ttest_5x2cv, "5x2"),
    "ftest_5x2cv": _CVTest(ftest_5x2cv, "5x2"),
    "ttest_corrected": _CVTest(ttest_corrected),
    "hotelling_t2": _CVTest(hotelling_t2, "independent", _PER_REPETITION, "`measures`", True),
    "anova": _CVTest(anova, "independent", _PER_REPETITION),
    "manova": _CVTest(manova, "independent", _PER_REPETITION, "`measures`", True),
    "posthoc": _CVTest(posthoc, "independent", _PER_REPETITION, "the model names"),
    "signflip_test": _CVTest(signflip_test),
    "signflip_test_folds": _CVTest(
        signflip_test,
        "independent",
        "`signflip_test` (per-instance differences, averaged over repetitions)",
    ),
}


def _doc(method):
    """:func:`cv_doc` of a test method, ``{function}`` from its row of ``_CV_TESTS``."""
    return cv_doc(_CV_TESTS[method].function.__name__)


class FoldTests:
    """Paired tests of per-fold losses and measures; a mixin of ``CVResult``."""

    def _test(self, method, kwargs, pool_repetitions=False, measures=None):
        """Shared plumbing of the test methods, from their row of ``_CV_TESTS``.

        Checks, in this order: a ``names`` keyword the result sets itself,
        ``measures``, the design (pooled repetitions, 5x2 cv). Returns the
        public test function and the validated ``measures`` tuple.
        """
        row = _CV_TESTS[method]
        if row.names_from is not None:
            self._no_names(kwargs, row.names_from)
        if row.measures:
            measures = self._measures_iv(measures)
        if row.design == "independent":
            self._check_pooling(method, pool_repetitions, alternative=row.alternative)
        elif row.design == "5x2":
            self._check_5x2()
        return row.function, measures

    def _check_pooling(self, test, pool_repetitions, *, alternative=None):
        """Refuse to pool the folds of several repetitions unless asked explicitly."""
        if not isinstance(pool_repetitions, bool):
            raise TypeError(
                f"`pool_repetitions` must be a bool, got {type(pool_repetitions).__name__}."
            )
        R, K = (int(v) for v in self.index.shape[:2])
        if R == 1 or pool_repetitions:
            return
        design = "5x2 cv" if (R, K) == (5, 2) else f"{R} repetitions x {K} folds"
        use = alternative or "`ttest_corrected` for a pair of models"
        if (R, K) == (5, 2) and alternative is None:
            use = "`ttest_5x2cv` / `ftest_5x2cv` (this is 5x2 cv) or `ttest_corrected`"
        raise ValueError(
            f"`{test}` would pool the {R * K} folds of a {design} design as if they were "
            "independent, but the repetitions reuse the same instances for training and "
            f"testing, so its p-value is far too small. Use {use}; or pass "
            "pool_repetitions=True to pool anyway."
        )

    @_doc("ttest_paired")
    @x64
    def ttest_paired(self, a, b, *, loss=None, loss_kwargs=None, pool_repetitions=False, **kwargs):
        """Paired t test on the per-fold losses of models ``a`` and ``b``.

        Yildiz & Alpaydin's eq. 5. With more than one repetition (``repeats >
        1``, ``FiveByTwo()``, ``RandomSplits``) the folds overlap and are not
        independent: this refuses unless ``pool_repetitions=True``; use
        ``ttest_corrected`` (Nadeau & Bengio) or the 5x2 cv tests.

        Parameters
        ----------
        {a_b}
        {loss}
        {pool}
        **kwargs
            Passed to {function} (``alternative``...).

        Returns
        -------
        TtestResult
            As {function}.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive
        Loss".

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.ttest_paired("lda", "nc", loss="hinge")
        >>> round(float(r.pvalue), 4)
        0.4827
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        if "cluster" in kwargs:  # the folds are its units, not the instances
            raise ValueError(
                "`cluster` groups instances; `ttest_paired` tests per-fold values. For "
                "clustered instances use `signflip_test`, `bootstrap_test` or `mcnemar` with "
                "`cluster=`, or jaxtests.ttest_paired on instance_differences(a, b) and zeros "
                "with the tested instances' labels."
            )
        test, _ = self._test("ttest_paired", kwargs, pool_repetitions)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return test(la.ravel(), lb.ravel(), **kwargs)

    def _check_5x2(self):
        if tuple(self.index.shape[:2]) != (5, 2):
            raise ValueError(
                f"5x2 cv tests need 5 repetitions of 2 folds (cv=FiveByTwo()); got "
                f"{tuple(self.index.shape[:2])}."
            )

    @_doc("ttest_5x2cv")
    @x64
    def ttest_5x2cv(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Dietterich's 5x2 cv t test on per-fold losses ``(5, 2)``.

        Needs ``cv=FiveByTwo()``.

        Parameters
        ----------
        {a_b}
        {loss}
        **kwargs
            Passed to {function}.

        Returns
        -------
        Ttest5x2cvResult
            As {function}.

        References
        ----------
        Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
        classification learning algorithms. Neural Computation 10, 1895-1923.

        Examples
        --------
        {data}
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y,
        ...     cv=jaxtests.FiveByTwo(), key=0)
        >>> round(float(cv.ttest_5x2cv("lda", "nc").pvalue), 4)
        1.0
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ttest_5x2cv", kwargs)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return test(la, lb, **kwargs)

    @_doc("ftest_5x2cv")
    @x64
    def ftest_5x2cv(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Alpaydın's combined 5x2 cv F test on per-fold losses ``(5, 2)``.

        Needs ``cv=FiveByTwo()``.

        Parameters
        ----------
        {a_b}
        {loss}
        **kwargs
            Passed to {function}.

        Returns
        -------
        Ttest5x2cvResult
            As {function}.

        References
        ----------
        Alpaydin, E. (1999). Combined 5x2 cv F test for comparing supervised
        classification learning algorithms. Neural Computation 11, 1885-1892.

        Examples
        --------
        {data}
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y,
        ...     cv=jaxtests.FiveByTwo(), key=0)
        >>> round(float(cv.ftest_5x2cv("lda", "nc").pvalue), 4)
        0.215
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ftest_5x2cv", kwargs)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return test(la, lb, **kwargs)

    @_doc("ttest_corrected")
    @x64
    def ttest_corrected(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Nadeau–Bengio corrected resampled t test over all ``R * K`` splits.

        Parameters
        ----------
        {a_b}
        {loss}
        **kwargs
            Passed to {function} (``n_train``/``n_test``
            are taken from the splits).

        Returns
        -------
        TtestResult
            As {function}.

        References
        ----------
        Nadeau, C., & Bengio, Y. (2003). Inference for the generalization error. Machine
        Learning 52, 239-281.

        Examples
        --------
        {data}
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y,
        ...     cv=jaxtests.RandomSplits(5, 0.2), key=0)
        >>> round(float(cv.ttest_corrected("lda", "nc").pvalue), 4)
        0.2272
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ttest_corrected", kwargs)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        n_train = int(np.asarray(self.n_train).ravel()[0])
        n_test = int(np.asarray(self.valid).sum(-1).ravel()[0])
        return test(la.ravel(), lb.ravel(), n_train=n_train, n_test=n_test, **kwargs)

    @staticmethod
    def _measures_iv(measures):
        if isinstance(measures, str) or not hasattr(measures, "__iter__"):
            raise TypeError("`measures` must be a sequence of measure names, e.g. ('tpr', 'fpr').")
        measures = tuple(measures)
        return as_names(measures, len(measures), "measures")  # distinct, or named

    @x64
    def _measure_matrix(self, name, measures):
        measures = self._measures_iv(measures)
        cols = [self._fold_scores(name, m, "measures").ravel() for m in measures]
        return jnp.stack(cols, axis=-1)  # (R*K, p)

    @staticmethod
    def _no_names(kwargs, source):
        if "names" in kwargs:
            raise TypeError(f"`names` is set from {source}; do not pass it.")

    @_doc("hotelling_t2")
    @x64
    def hotelling_t2(self, a, b, *, measures=("tpr", "fpr"), pool_repetitions=False, **kwargs):
        """Paired Hotelling T² on per-fold measure vectors ``(R*K, p)``.

        As Yildiz & Alpaydin ("Multivariate Comparison of Classification
        Algorithms"). The result's ``names`` are the measures.

        Parameters
        ----------
        {a_b}
        measures : sequence of str, default ("tpr", "fpr")
            Measure names, one column each (see :meth:`fold_scores`).
        {pool}
        **kwargs
            Passed to {function}.

        Returns
        -------
        HotellingResult
            As {function}.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification
        Algorithms".

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.hotelling_t2("lda", "nc", measures=("tpr", "fpr"))
        >>> r.names, round(float(r.pvalue), 4)
        (('tpr', 'fpr'), 0.4648)
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, measures = self._test("hotelling_t2", kwargs, pool_repetitions, measures)
        return test(
            self._measure_matrix(a, measures),
            self._measure_matrix(b, measures),
            names=measures,
            **kwargs,
        )

    def _names(self, models):
        if models is None:
            return list(self.names)
        if isinstance(models, str) or not hasattr(models, "__iter__"):
            raise TypeError("`models` must be a sequence of model names (or None for all).")
        for m in models:
            self._m(m)
        return list(models)

    @_doc("anova")
    @x64
    def anova(self, models=None, *, loss=None, loss_kwargs=None, pool_repetitions=False, **kwargs):
        """One-way ANOVA on per-fold losses, ``x : (L, R*K)``.

        Parameters
        ----------
        models : sequence of str or None, default None
            Model names (``None``: all).
        {loss}
        {pool}
        **kwargs
            Passed to {function}.

        Returns
        -------
        AnovaResult
            As {function}.

        References
        ----------
        Montgomery, D. C. (2009). Design and Analysis of Experiments, ch. 3.

        Examples
        --------
        {data}
        {cv}
        >>> round(float(cv.anova(loss="hinge").pvalue), 4)
        0.7668
        """
        self._names(models)  # an unknown name first, then the design
        test, _ = self._test("anova", kwargs, pool_repetitions)
        x = jnp.stack(
            [self.fold_scores_any(m, loss, loss_kwargs).ravel() for m in self._names(models)]
        )
        return test(x, **kwargs)

    @_doc("manova")
    @x64
    def manova(self, models=None, *, measures=("tpr", "fpr"), pool_repetitions=False, **kwargs):
        """MANOVA on per-fold measure vectors, ``x : (L, R*K, p)``.

        As Yildiz & Alpaydin ("Multivariate Comparison of Classification
        Algorithms"). The result's ``names`` are the measures.

        Parameters
        ----------
        models : sequence of str or None, default None
            Model names (``None``: all).
        measures : sequence of str, default ("tpr", "fpr")
            Measure names, one column each.
        {pool}
        **kwargs
            Passed to {function}.

        Returns
        -------
        ManovaResult
            As {function}.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification
        Algorithms".

        Examples
        --------
        {data}
        {cv}
        >>> round(float(cv.manova().pvalue), 4)
        0.8524
        """
        self._names(models)  # an unknown name first, then the design
        test, measures = self._test("manova", kwargs, pool_repetitions, measures)
        x = jnp.stack([self._measure_matrix(m, measures) for m in self._names(models)])
        return test(x, names=measures, **kwargs)

    @_doc("posthoc")
    @x64
    def posthoc(
        self,
        models=None,
        *,
        test="t",
        loss=None,
        loss_kwargs=None,
        measures=None,
        pool_repetitions=False,
        higher_is_better=None,
        **kwargs,
    ):
        """Pairwise post hoc tests among models, named by the model names.

        ``test="t"`` or ``"permutation"``: per-fold losses ``x : (L, R*K)`` of
        ``loss`` (default 0/1 for classifiers, square for regressors).
        ``test="hotelling"``: per-fold measure vectors ``x : (L, R*K, p)`` of
        ``measures`` (default ``("tpr", "fpr")``).

        Parameters
        ----------
        models : sequence of str or None, default None
            Model names (``None``: all).
        test : {"t", "permutation", "hotelling"}, default "t"
            The pairwise test.
        {loss}
        measures : sequence of str, optional
            Measures of ``test="hotelling"`` (default ``("tpr", "fpr")``).
        {pool}
        higher_is_better : bool or None, default None
            Direction of the ordering (best first); ``None`` takes it from ``loss``:
            losses, ``error``, ``fpr`` and ``rmse`` are lower-is-better, ``accuracy``,
            ``tpr``, ``f1``, ``roc_auc`` and the other rates higher-is-better
            (``jaxtests._direction``).
        **kwargs
            Passed to {function} (``correction``, ``alpha``...).

        Returns
        -------
        PosthocResult
            As {function}; its ``text()`` says which way is better.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification
        Algorithms" (§2.2, §3.5).

        Examples
        --------
        {data}
        {cv}
        >>> print(cv.posthoc(loss="hinge").text())  # doctest: +ELLIPSIS
        Pairwise t tests, holm correction, alpha = 0.05
        ...
        """
        self._names(models)  # an unknown name first, then the design
        run, _ = self._test("posthoc", kwargs, pool_repetitions)
        names = self._names(models)
        if test == "hotelling":
            if loss is not None or loss_kwargs is not None:
                raise ValueError(
                    "`loss` applies to test='t' or 'permutation'; test='hotelling' compares "
                    "the `measures` vectors."
                )
            measures = ("tpr", "fpr") if measures is None else self._measures_iv(measures)
            x = jnp.stack([self._measure_matrix(m, measures) for m in names])
        else:
            if measures is not None:
                raise ValueError(
                    f"`measures` applies to test='hotelling'; test={test!r} compares one "
                    "`loss` (or measure) per fold."
                )
            x = jnp.stack([self.fold_scores_any(m, loss, loss_kwargs).ravel() for m in names])
        if higher_is_better is None:  # from the measure; hotelling has no ordering
            higher_is_better = bool(_direction.higher_is_better(self._default_loss(loss), False))
        return run(x, test=test, names=tuple(names), higher_is_better=higher_is_better, **kwargs)

    @staticmethod
    def _check_resamples_used(res, kwargs, what):
        """A given ``n_resamples`` must be honoured: refuse an exact or closed-form result."""
        if "n_resamples" in kwargs and res.method != "monte-carlo":
            raise ValueError(
                f"`n_resamples`={kwargs['n_resamples']!r} is not used: the {what} "
                f"gave the {res.method!r} p-value (no random draws). Drop `n_resamples`, or "
                "pass method='monte-carlo' to draw them."
            )

    @_doc("signflip_test_folds")
    @x64
    def signflip_test_folds(
        self, a, b, *, loss=None, loss_kwargs=None, pool_repetitions=False, **kwargs
    ):
        """Sign-flip permutation test on the per-fold loss (or measure) differences ``(R*K,)``.

        With few folds "auto" enumerates all ``2^(R K)`` patterns exactly; a
        given ``n_resamples`` must then be dropped (or ``method="monte-carlo"``
        passed), as in :meth:`signflip_test`.

        Parameters
        ----------
        {a_b}
        {loss}
        {pool}
        **kwargs
            Passed to {function}.

        Returns
        -------
        PermutationTestResult
            As {function}.

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.signflip_test_folds("lda", "nc", loss="hinge")
        >>> r.method, round(float(r.pvalue), 4)
        ('exact', 0.6875)
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("signflip_test_folds", kwargs, pool_repetitions)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        res = test((la - lb).ravel(), **kwargs)
        self._check_resamples_used(res, kwargs, f"test of the {la.size} per-fold differences")
        return res
