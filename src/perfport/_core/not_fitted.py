"""``NotFittedError``: an estimator was asked to predict before ``fit``.

It is scikit-learn's ``sklearn.exceptions.NotFittedError`` (what scikit-learn's users catch)
and a ``PerfportError`` (what perfport's callers catch). This module imports scikit-learn
where it is installed, so it is imported only when the error is raised (``estimator``) or
caught by name; without scikit-learn the error has that class's bases, ValueError and
AttributeError, instead.
"""

from __future__ import annotations

from perfport._core.errors import PerfportError

try:
    from sklearn.exceptions import NotFittedError as _SklearnNotFitted
except ImportError:  # the models extra is not installed: nothing can name its class

    class _SklearnNotFitted(ValueError, AttributeError):  # type: ignore[no-redef]
        """scikit-learn's NotFittedError's bases, where scikit-learn is not installed."""


class NotFittedError(PerfportError, _SklearnNotFitted):
    """An estimator's fitted attribute was read (by ``predict``, ``propose`` or the caller)
    before ``fit``; the message names the estimator and says to call ``fit`` first."""
