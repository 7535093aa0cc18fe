"""scikit-learn's estimator protocol without scikit-learn: ``get_params``, ``set_params``, a
repr of the settings, and ``NotFittedError`` for a fitted attribute read before ``fit``.

perfport's estimators (the work-group-size predictors, the kernel selectors) keep to
scikit-learn's conventions: the constructor stores its arguments as given, under their own
names, and does nothing else; ``fit`` checks them and learns; fitted attributes end in ``_``.
With this mixin ``sklearn.base.clone`` and parameter searches work on them. They cannot
inherit ``sklearn.base.BaseEstimator``: a fitted predictor loads and predicts where
scikit-learn is not installed, and importing it costs seconds that a prediction daemon's
start does not have.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Self

from perfport._core.errors import SettingsError


class Estimator:
    """Settings are the constructor's parameters (no ``*args``, no ``**kwargs``), each stored
    on the instance under its own name. No nested estimators: ``deep`` changes nothing."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The constructor's parameters, sorted (as scikit-learn's ``get_params`` lists them)."""
        signature = inspect.signature(cls.__init__)
        return sorted(
            p.name
            for p in signature.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The settings, by name: what ``type(self)(**params)`` builds an unfitted copy from."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Self:
        """Change settings by name; what a fitted estimator learnt stays until the next
        ``fit``, as in scikit-learn. SettingsError (a ValueError) naming the valid ones for an
        unknown name."""
        names = self._get_param_names()
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise SettingsError(
                f"{type(self).__name__} has no parameter {', '.join(unknown)}; "
                f"its parameters: {', '.join(names)}"
            )
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        # As scikit-learn's: the settings that differ from the constructor's defaults.
        defaults = inspect.signature(type(self).__init__).parameters
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params(deep=False).items()
            if defaults[name].default is inspect.Parameter.empty
            or not _same(value, defaults[name].default)
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    if not TYPE_CHECKING:  # type checkers would otherwise accept any attribute name

        def __getattr__(self, name: str) -> Any:
            # Called only where the attribute is missing: a fitted one (public, ending in
            # "_") of an estimator that has none yet was read before fit.
            fitted = any(k.endswith("_") and not k.startswith("_") for k in vars(self))
            if name.endswith("_") and not name.startswith("_") and not fitted:
                from perfport._core.not_fitted import NotFittedError  # imports scikit-learn

                raise NotFittedError(
                    f"this {type(self).__name__} is not fitted yet (it has no {name}); "
                    "call fit first"
                )
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _same(value: Any, default: Any) -> bool:
    try:
        return bool(value == default) and type(value) is type(default)
    except Exception:  # an array compares element by element
        return False
