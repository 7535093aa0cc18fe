"""Optuna's samplers (TPE, Gaussian process, CMA-ES, quasi-Monte Carlo) as ask/tell strategies.

Optuna is an optional dependency (the ``optuna`` extra), imported when such a strategy is
built. How perfport's search maps onto Optuna's:

- Each parameter becomes the position of its value (0..n-1, the order its values are listed),
  like every perfport strategy sees it (``Geometry``): an ``IntDistribution`` when every value
  is a number, so the sampler may treat neighbours as close (values are usually sorted, often
  powers of two), else a ``CategoricalDistribution``. Parameters with one value are left out.
- The objective is log time: TPE and CMA-ES only rank values, and the GP models log time far
  better than time, whose scale spans orders of magnitude.
- A suggestion that is illegal (breaks a restriction) or was already measured is repaired: the
  nearest legal configuration not yet measured (in the unit coordinates of the positions) is
  measured instead, and the suggestion's own trial is told that value. Nothing is measured
  twice and no suggestion is left unanswered, so the study never stalls in an infeasible
  region; telling Optuna "failed" instead would teach TPE nothing and leave CMA-ES resampling
  the same generation, since it only updates on its own generation's completed trials.
- A configuration that failed (compile error, refused launch, time-out, wrong result) is told
  as completed with a penalty: the worst log time when the first failure is told, plus log 2.
  All four samplers learn only from completed trials, so a failing region must carry a value
  to be avoided; a bounded penalty keeps the GP's standardised targets from being flattened by
  one huge number. Failures before the first success wait (their trials stay open) until it
  comes, as there is no time yet to be worse than; successes slower than that worst time are
  then squeezed below the penalty (same order, at most log 2 / 2 above it), so a failure stays
  worse than every success, including later ones. Optuna's own ways were not taken: a FAIL
  state teaches TPE and the GP nothing, and constraints (``constraints_func``, deprecated in
  Optuna 5 for ``set_constraint``) reach neither CMA-ES nor Optuna 4.0's GP.
- Configurations told without being asked (the default configuration, a resumed campaign's
  results) enter the study as completed trials of their own.
- Seeds of 2**32 or more (which perfport accepts, Optuna's samplers refuse) are hashed to one
  below 2**32; smaller seeds go to the sampler as they are.
"""

from __future__ import annotations

import math
import warnings
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from perfport._core.optional import require
from perfport.space import Space
from perfport.strategies.base import Strategy
from perfport.strategies.geometry import Geometry

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.samplers import BaseSampler
    from optuna.trial import Trial

_PENALTY = math.log(2.0)  # how much worse than the worst time a failure is told
_SEEDS = 2**32  # Optuna's samplers take seeds below this (numpy's RandomState)


def _sampler_seed(seed: int) -> int:
    """A seed Optuna's samplers take, for any seed perfport takes: small ones as they are (so
    runs stay as they were), larger ones hashed (not reduced modulo, which would make 2**32
    replay seed 0)."""
    return seed if seed < _SEEDS else int(np.random.SeedSequence(seed).generate_state(1)[0])


def _optuna(purpose: str) -> Any:
    optuna = require("optuna", "optuna", purpose)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _is_ordinal(values: tuple[object, ...]) -> bool:
    return all(isinstance(v, Real) and not isinstance(v, bool) for v in values)


class OptunaSampler(Strategy):
    """An Optuna sampler driven through a study's ask/tell interface (see the module doc)."""

    name: ClassVar[str]
    summary: ClassVar[str]
    # The packages besides optuna that the sampler imports only once it samples (scipy's QMC
    # after the first trial, the GP after its start-up trials), each with the extra installing
    # it: checked before anything runs, so no campaign fails half-way on an import.
    needs: ClassVar[tuple[tuple[str, str], ...]] = ()

    @classmethod
    def check_available(cls) -> None:
        _optuna(f"the {cls.name} strategy")
        for module, extra in cls.needs:
            require(module, extra, f"the {cls.name} strategy")

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self.check_available()
        optuna = self._optuna = _optuna(f"the {self.name} strategy")
        self.geometry = Geometry(space)
        dists = optuna.distributions
        self._dims: list[tuple[int, str]] = []  # (column of the positions, name in the study)
        self._distributions: dict[str, BaseDistribution] = {}
        for d, param in enumerate(space.params):
            n = len(param.values)
            if n < 2:
                continue
            self._dims.append((d, param.name))
            self._distributions[param.name] = (
                dists.IntDistribution(0, n - 1)
                if _is_ordinal(param.values)
                else dists.CategoricalDistribution(tuple(range(n)))
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # experimental-feature notices
            self._study = optuna.create_study(
                direction="minimize", sampler=self.sampler(optuna, _sampler_seed(self.seed))
            )
        self._open: dict[int, Trial] = {}  # asked index -> the suggestion's trial
        self._worst: float | None = None  # the worst log time told
        self._level: float | None = None  # the worst log time when the first failure was told
        self._held: list[tuple[int, Trial | None]] = []  # failures told before any success

    def sampler(self, optuna: Any, seed: int) -> BaseSampler:
        """The Optuna sampler this strategy drives."""
        raise NotImplementedError

    def _position(self, params: dict[str, Any]) -> np.ndarray:
        position = np.zeros(self.geometry.pos.shape[1], dtype=np.int64)
        for d, key in self._dims:
            position[d] = int(params[key])
        return position

    def ask(self) -> int | None:
        if len(self.told) + len(self._open) >= len(self.geometry):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial = self._study.ask(self._distributions)
        position = self._position(trial.params)
        index = self.geometry.index(position)
        if index is None or index in self.told or index in self._open:
            # Repair: the nearest legal configuration not yet measured or pending.
            exclude = set(self.told) | set(self._open)
            point = position / np.maximum(self.geometry.sizes - 1.0, 1.0)
            index = self.geometry.nearest(point, exclude)
            if index is None:
                self._study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
                return None
        self._open[index] = trial
        return index

    def tell(self, index: int, value: float | None) -> None:
        super().tell(index, value)
        trial = self._open.pop(index, None)
        if value is None and self._worst is None:
            self._held.append((index, trial))  # no time yet for its penalty to be worse than
            return
        self._record(index, trial, self._objective(value))
        held, self._held = self._held, []
        for i, waiting in held:  # the first success has come: the held failures now
            self._record(i, waiting, self._objective(None))

    def _record(self, index: int, trial: Trial | None, objective: float) -> None:
        """Tell the study: the suggestion's trial, or a trial of its own if it was not asked."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if trial is not None:
                self._study.tell(trial, objective)
                return
            position = self.geometry.pos[index]
            params = {key: int(position[d]) for d, key in self._dims}
            self._study.add_trial(
                self._optuna.trial.create_trial(
                    params=params, distributions=self._distributions, value=objective
                )
            )

    def _objective(self, value: float | None) -> float:
        """Log time; a failure the level plus log 2, once there is a level (see the module doc)."""
        if value is None:
            assert self._worst is not None  # failures wait for the first success
            if self._level is None:
                self._level = self._worst
            return self._level + _PENALTY
        logged = math.log(value)
        self._worst = logged if self._worst is None else max(self._worst, logged)
        if self._level is None or logged <= self._level:
            return logged
        # Told values cannot be revised, so a success slower than the failures' level is
        # squeezed below their penalty: monotone (TPE and CMA-ES keep its rank), and at most
        # half the penalty above the level, so no rounding lets it reach a failure's value.
        squeeze = _PENALTY / 2
        return self._level + squeeze * -math.expm1(-(logged - self._level) / squeeze)


class OptunaTPE(OptunaSampler):
    """Optuna's tree-structured Parzen estimator, multivariate (one joint density over the
    parameters, which interact in kernels: tile sizes against work-group sizes)."""

    name = "optuna_tpe"
    summary = "Optuna's TPE sampler (multivariate), on log time (the optuna extra)"

    def sampler(self, optuna: Any, seed: int) -> BaseSampler:
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)


class OptunaGP(OptunaSampler):
    """Optuna's Gaussian-process sampler. It needs PyTorch besides Optuna, hence its own
    extra, ``optuna-gp``: the others need no PyTorch."""

    name = "optuna_gp"
    summary = "Optuna's Gaussian-process sampler, on log time (the optuna-gp extra)"
    needs = (
        ("scipy.optimize", "optuna-gp"),
        ("scipy.stats.qmc", "optuna-gp"),
        ("torch", "optuna-gp"),
    )

    def sampler(self, optuna: Any, seed: int) -> BaseSampler:
        return optuna.samplers.GPSampler(seed=seed, deterministic_objective=True)


class OptunaCmaEs(OptunaSampler):
    """Optuna's CMA-ES sampler; categorical parameters are sampled independently (at random),
    as Optuna does for CMA-ES."""

    name = "optuna_cmaes"
    summary = "Optuna's CMA-ES sampler, on log time (the optuna extra)"
    needs = (("cmaes", "optuna"),)

    def sampler(self, optuna: Any, seed: int) -> BaseSampler:
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)


class OptunaQMC(OptunaSampler):
    """Optuna's scrambled Sobol sequence: space filling with no model."""

    name = "optuna_qmc"
    summary = "Optuna's quasi-Monte Carlo (scrambled Sobol) sampler (the optuna extra)"
    needs = (("scipy.stats.qmc", "optuna"),)

    def sampler(self, optuna: Any, seed: int) -> BaseSampler:
        return optuna.samplers.QMCSampler(seed=seed, scramble=True, warn_independent_sampling=False)
