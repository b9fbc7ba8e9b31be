"""``CVResult``'s tests of per-instance outputs (a mixin of :class:`jaxtests.CVResult`).

McNemar's test and the sign-flip test of instance differences, and the tests of
one test set (the instances of every fold together): bootstrap, DeLong's AUC
test, Cochran's Q.
"""

import numpy as np

from jaxtests import _bootstrap
from jaxtests._cv_docs import cv_doc
from jaxtests._precision import x64
from jaxtests._validation import (
    as_int_scalar,
)

__all__ = ["InstanceTests"]


class InstanceTests:
    """Tests of the per-instance outputs; a mixin of ``CVResult``."""

    def _tested_clusters(self, cluster, index=None):
        """The labels of the tested instances, by instance index (or of ``index``), from
        ``cluster``: one label per instance of the data set (None: unclustered)."""
        if cluster is None:
            return None
        labels = np.asarray(cluster)
        n = int(self.y.shape[0])
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(
                f"`cluster` needs one label per instance of the data set ({n}, as `y`), got "
                f"shape {labels.shape}."
            )
        if index is None:  # each tested instance once, by index (as instance_differences)
            index = np.unique(np.asarray(self.index)[np.asarray(self.valid)])
        return labels[index]

    @cv_doc()
    @x64
    def mcnemar(self, a, b, *, repetition=None, cluster=None, **kwargs):
        """McNemar's test of equal error rates of models ``a`` and ``b`` on the same instances.

        The predictions of the two classifiers on every test instance of one
        cross-validation run (each instance tested once, by the model of its fold) are
        compared with the true labels: ``n01`` instances only ``a`` gets right, ``n10``
        only ``b`` (Dietterich 1998 on one test set; here the test folds together).
        Binary: a decision value ``> 0`` predicts the positive class; multiclass: the
        predicted classes.

        Parameters
        ----------
        a, b : str
            Model names.
        repetition : int or None, default None
            Which repetition of a repeated cross-validation to test (its instances are
            tested once each); ``None`` for a single run, refused over several.
        cluster : array_like, (n,), optional
            One cluster label per instance of the data set (``y``'s order): Durkalski et
            al.'s clustered test (:func:`jaxtests.mcnemar` with ``cluster``) on the
            labels of the tested instances.
        **kwargs
            Passed to :func:`jaxtests.mcnemar` (``method``, ``correction``).

        Returns
        -------
        McNemarResult
            As :func:`jaxtests.mcnemar`.

        References
        ----------
        McNemar, Q. (1947). Psychometrika 12, 153-157. Dietterich, T. G. (1998).
        Approximate statistical tests for comparing supervised classification learning
        algorithms. Neural Computation 10.

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.mcnemar("lda", "nc")  # each right once where the other is wrong
        >>> int(r.n01), int(r.n10), float(r.pvalue)
        (1, 1, 1.0)
        """
        import jaxtests

        self._need_clf("`mcnemar`")
        ia, ib = self._m(a), self._m(b)
        R = int(self.index.shape[0])
        if repetition is None:
            if R > 1:
                raise ValueError(
                    f"`mcnemar` compares the predictions of one cross-validation run; this "
                    f"result has {R} repetitions (or random splits) whose test sets reuse the "
                    f"same instances. Pick one with `repetition=` (0 to {R - 1})."
                )
            r = 0
        else:
            r = as_int_scalar(repetition, "repetition", minimum=0)
            if r >= R:
                raise ValueError(f"`repetition` must be below {R}, got {r}.")
        valid = np.asarray(self.valid[r])
        idx = np.asarray(self.index[r])[valid]
        if np.unique(idx).size != idx.size:
            raise ValueError(
                "`mcnemar` needs each instance tested once; the test sets of these folds "
                "overlap. Use k-fold cross-validation, or per-instance losses with "
                "`signflip_test`."
            )
        y = np.asarray(self.y)[idx]
        fa = np.asarray(self.outputs[ia, r])[valid]
        fb = np.asarray(self.outputs[ib, r])[valid]
        if self.classes is None:  # binary: +1 iff the decision value is > 0
            y, pa, pb = (np.where(v > 0, 1, -1) for v in (y, fa, fb))
        else:
            y, pa, pb = (v.astype(np.int64) for v in (y, fa, fb))
        cluster = self._tested_clusters(cluster, idx)
        return jaxtests.mcnemar(y, pa, pb, cluster=cluster, **kwargs)

    @cv_doc()
    @x64
    def signflip_test(self, a, b, *, loss=None, loss_kwargs=None, cluster=None, **kwargs):
        """Sign-flip permutation test on the paired per-instance loss differences.

        ``d_i = loss_a(i) - loss_b(i)`` on every tested instance ``i`` (Hein),
        from :meth:`instance_differences`: ``n`` differences for k-fold
        cv, each instance's mean over the repetitions when ``repeats > 1``.
        ``loss`` is a loss name or callable (default 0/1 for classifiers, square
        for regressors); ``kwargs`` go to :func:`jaxtests.signflip_test`. A
        given ``n_resamples`` must be used: if the p-value comes out exact or
        binomial (0/1 loss differences take only -1, 0, +1), this raises; drop
        ``n_resamples`` or pass ``method="monte-carlo"``. For the per-fold
        differences use :meth:`signflip_test_folds`.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            Per-instance loss (see above).
        loss_kwargs : dict, optional
            Keywords of the loss.
        cluster : array_like, (n,), optional
            One cluster label per instance of the data set (``y``'s order): each
            cluster's differences are flipped together (:func:`jaxtests.signflip_test`
            with ``cluster``, on the labels of the tested instances).
        **kwargs
            Passed to :func:`jaxtests.signflip_test` (``n_resamples``, ``key``...).

        Returns
        -------
        PermutationTestResult
            As :func:`jaxtests.signflip_test`.

        References
        ----------
        Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
        University, 2013.

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.signflip_test("lda", "nc")  # 0/1 differences: a binomial p-value
        >>> r.method, round(float(r.pvalue), 4)
        ('binomial', 1.0)
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("signflip_test", kwargs)
        d = self.instance_differences(a, b, loss, **(loss_kwargs or {}))
        res = test(d, cluster=self._tested_clusters(cluster), **kwargs)
        self._check_resamples_used(res, kwargs, f"test of the {d.size} per-instance differences")
        return res

    # ---- one test set: per-instance bootstrap, DeLong, Cochran's Q

    def _pooled(self, names, what, *, pool_folds=True):
        """Targets and outputs ``(n_tested,)`` by instance index, each instance tested once."""
        R, K = (int(v) for v in self.index.shape[:2])
        if R > 1:
            raise ValueError(
                f"{what} reads each instance's one output, but this result has {R} repetitions "
                "(each instance is tested in each): use a result of one repetition."
            )
        if not pool_folds and K > 1:
            raise ValueError(
                f"{what} would pool the scores of {K} folds, each from its own model, into one "
                "ranking (scores of different models need not be comparable); pass "
                "pool_folds=True to pool them anyway."
            )
        if not isinstance(pool_folds, bool):
            raise TypeError(f"`pool_folds` must be a bool, got {type(pool_folds).__name__}.")
        valid = np.asarray(self.valid).reshape(-1)
        index = np.asarray(self.index).reshape(-1)[valid]
        order = np.argsort(index, kind="stable")
        y = np.asarray(self.y)[index[order]]
        outs = [np.asarray(self.outputs[self._m(n)]).reshape(-1)[valid][order] for n in names]
        return y, outs

    def _bootstrap_data(self, a, b, measure, loss, loss_kwargs, pool_folds):
        if measure is None:
            d = self.instance_differences(a, b, loss, **(loss_kwargs or {}))
            return (d, np.zeros_like(d)), "mean_difference"
        if loss is not None or loss_kwargs:
            raise ValueError("pass either `measure` or `loss` (and `loss_kwargs`), not both.")
        if measure not in _bootstrap.DIFFERENCE_MEASURES:
            raise ValueError(
                f"`measure` must be one of {list(_bootstrap.DIFFERENCE_MEASURES)} or None "
                f"(per-instance losses); got {measure!r}."
            )
        self._need_clf(f"`measure`={measure!r}")
        self._refuse_multiclass(f"`measure`={measure!r}", "use a per-instance loss.")
        pool = pool_folds or measure != "roc_auc"  # counts pool across folds; rankings do not
        y, (fa, fb) = self._pooled((a, b), f"the bootstrap of {measure!r}", pool_folds=pool)
        return (y, fa, fb), f"{measure}_difference"

    @cv_doc()
    @x64
    def bootstrap(
        self,
        a,
        b,
        *,
        measure=None,
        loss=None,
        loss_kwargs=None,
        pool_folds=False,
        cluster=None,
        **kwargs,
    ):
        """Bootstrap interval of the difference A - B on the test instances.

        ``measure=None``: the mean per-instance loss difference (``loss``, default 0/1
        for classifiers and square for regressors; :meth:`instance_differences`, averaged
        over repetitions). ``measure="roc_auc"``, ``"accuracy"``, ``"f1"``...: the
        difference of the measure over the pooled test instances (one repetition; the
        AUC pools the rankings of several folds' models only with ``pool_folds=True``).

        Parameters
        ----------
        a, b : str
            Model names.
        measure : str or None
        loss, loss_kwargs
            The per-instance loss when ``measure`` is None.
        pool_folds : bool, default False
            Allow one AUC over the scores of several folds' models.
        cluster : array_like, (n,), optional
            One cluster label per instance of the data set (``y``'s order): whole
            clusters of tested instances are resampled (:func:`jaxtests.bootstrap`
            with ``cluster``; not for ``roc_auc``).
        **kwargs
            Passed to :func:`jaxtests.bootstrap` (``n_resamples``, ``method``, ``key``...).

        Returns
        -------
        BootstrapResult

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.bootstrap("lda", "nc", loss="hinge", n_resamples=999, key=0)
        >>> r.confidence_interval.low < r.confidence_interval.high
        np.True_
        """
        import jaxtests

        data, stat = self._bootstrap_data(a, b, measure, loss, loss_kwargs, pool_folds)
        return jaxtests.bootstrap(data, stat, cluster=self._tested_clusters(cluster), **kwargs)

    @cv_doc()
    @x64
    def bootstrap_test(
        self,
        a,
        b,
        *,
        measure=None,
        loss=None,
        loss_kwargs=None,
        pool_folds=False,
        cluster=None,
        **kwargs,
    ):
        """Paired bootstrap test of no difference between A and B (see :meth:`bootstrap`).

        Parameters
        ----------
        a, b : str
            Model names.
        measure, loss, loss_kwargs, pool_folds, cluster
            As :meth:`bootstrap`.
        **kwargs
            Passed to :func:`jaxtests.bootstrap_test`.

        Returns
        -------
        BootstrapTestResult

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.bootstrap_test("lda", "nc", measure="accuracy", n_resamples=999, key=0)
        >>> 0 < r.pvalue <= 1
        np.True_
        """
        import jaxtests

        data, stat = self._bootstrap_data(a, b, measure, loss, loss_kwargs, pool_folds)
        cluster = self._tested_clusters(cluster)
        return jaxtests.bootstrap_test(data, stat, cluster=cluster, **kwargs)

    @cv_doc()
    @x64
    def delong_test(self, a, b, *, pool_folds=False, **kwargs):
        """DeLong's test of the ROC AUCs of A and B on the pooled test instances.

        One repetition; with several folds each fold's scores come from its own model,
        so their pooled ranking is used only with ``pool_folds=True``.

        Parameters
        ----------
        a, b : str
            Model names (binary classifiers).
        pool_folds : bool, default False
        **kwargs
            Passed to :func:`jaxtests.delong_test`.

        Returns
        -------
        DeLongResult

        Examples
        --------
        {data}
        {cv}
        >>> r = cv.delong_test("lda", "nc", pool_folds=True)
        >>> 0 <= r.pvalue <= 1
        np.True_
        """
        import jaxtests

        self._need_clf("`delong_test`")
        self._refuse_multiclass("`delong_test`", "compare accuracies with `cochran_q`.")
        y, (fa, fb) = self._pooled((a, b), "`delong_test`", pool_folds=pool_folds)
        return jaxtests.delong_test(y, fa, fb, **kwargs)

    @cv_doc()
    @x64
    def delong_interval(self, name, *, pool_folds=False, **kwargs):
        """DeLong interval of one model's ROC AUC on the pooled test instances.

        One repetition; with several folds each fold's scores come from its own model,
        so their pooled ranking is used only with ``pool_folds=True`` (as
        :meth:`delong_test`). A held-out split (``cv=[(train, test)]``) has one fold.

        Parameters
        ----------
        name : str
            Model name (a binary classifier).
        pool_folds : bool, default False
        **kwargs
            Passed to :func:`jaxtests.delong_interval` (``confidence_level``).

        Returns
        -------
        DeLongIntervalResult
            ``auc``, ``confidence_interval`` (``low``, ``high``), ``standard_error``.

        Examples
        --------
        {data}
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda()}, X, y, cv=[(np.arange(20), np.arange(20, 40))])
        >>> r = cv.delong_interval("lda")
        >>> bool(r.confidence_interval.low <= r.auc <= r.confidence_interval.high)
        True
        """
        import jaxtests

        self._need_clf("`delong_interval`")
        self._refuse_multiclass("`delong_interval`", "it is the AUC of binary scores.")
        y, (f,) = self._pooled((name,), "`delong_interval`", pool_folds=pool_folds)
        return jaxtests.delong_interval(y, f, **kwargs)

    @cv_doc()
    @x64
    def cochran_q(self, models=None, **kwargs):
        """Cochran's Q of the models' predictions on the test instances (one repetition).

        Binary classifiers predict +1 iff their decision value is ``> 0``;
        multiclass ones their class.

        Parameters
        ----------
        models : sequence of str, optional
            Model names (default: all, at least 2).
        **kwargs
            Passed to :func:`jaxtests.cochran_q` (``method``, ``correction``...).

        Returns
        -------
        CochranQResult
            With ``names`` the model names.

        Examples
        --------
        {data}
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid(), "qda": models.qda()},
        ...     X, y, cv=5, key=0)
        >>> cv.cochran_q().names
        ('lda', 'nc', 'qda')
        """
        import jaxtests

        self._need_clf("`cochran_q`")
        self._no_names(kwargs, "the model names")
        names = self._names(models)
        y, outs = self._pooled(names, "`cochran_q`")
        if self.classes is None:
            outs = [np.where(f > 0, 1, -1) for f in outs]
            y = np.where(y > 0, 1, -1)
        else:
            outs = [f.astype(np.int64) for f in outs]
            y = y.astype(np.int64)
        return jaxtests.cochran_q(y, *outs, names=names, **kwargs)
