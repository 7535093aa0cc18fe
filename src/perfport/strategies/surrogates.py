"""Surrogate models of log kernel time over the unit cube of value positions, in numpy.
Estimator style: ``fit(x, y)``, then ``predict(x) -> (mean, std)``."""

from __future__ import annotations

import math

import numpy as np

_SQRT5 = math.sqrt(5.0)


def squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """All pairwise squared Euclidean distances, (len(a), len(b)), without a 3-D temporary."""
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d, 0.0)


class GaussianProcess:
    """A Gaussian process with a Matern-5/2 ARD kernel (one length scale per dimension),
    constant mean and fitted noise. Hyperparameters maximise the marginal likelihood by
    gradient ascent in log space; ``warm`` starts from a previous fit, which keeps refits
    cheap when one point is added at a time."""

    def __init__(self, steps: int = 30, warm: np.ndarray | None = None) -> None:
        self.steps = steps
        self.warm = warm

    def _kernel(self, a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> np.ndarray:
        r = np.sqrt(squared_distances(a / scale, b / scale)) * _SQRT5
        return (1.0 + r + r * r / 3.0) * np.exp(-r)

    def _evidence(
        self, theta: np.ndarray, x: np.ndarray, y: np.ndarray, gradient: bool
    ) -> tuple[float, np.ndarray | None]:
        """Log marginal likelihood (and its gradient) at theta = (log scales..., log noise)."""
        scale, noise = np.exp(theta[:-1]), math.exp(theta[-1])
        diff2 = (x[:, None, :] - x[None, :, :]) ** 2 / scale**2  # (n, n, d): n is small here
        r = np.sqrt(diff2.sum(-1)) * _SQRT5
        e = np.exp(-r)
        k = (1.0 + r + r * r / 3.0) * e + (noise + 1e-8) * np.eye(len(x))
        try:
            chol = np.linalg.cholesky(k)
        except np.linalg.LinAlgError:
            return -np.inf, None
        linv = np.linalg.inv(chol)  # small n: one inverse serves alpha and K^-1
        alpha = linv.T @ (linv @ y)
        value = -0.5 * y @ alpha - np.log(np.diag(chol)).sum()
        if not gradient:
            return float(value), None
        w = np.outer(alpha, alpha) - linv.T @ linv
        # dK/dlog(scale_j) = (5/3) (1 + r) e^-r (dx_j/scale_j)^2
        common = (5.0 / 3.0) * (1.0 + r) * e
        grad = np.empty(len(theta))
        grad[:-1] = 0.5 * np.einsum("ij,ijk->k", w * common, diff2)
        grad[-1] = 0.5 * noise * np.trace(w)
        return float(value), grad

    def fit(self, x: np.ndarray, y: np.ndarray) -> GaussianProcess:
        self.x_ = x
        self.mean_ = float(y.mean())
        self.sd_ = float(y.std()) or 1.0
        target = (y - self.mean_) / self.sd_
        d = x.shape[1]
        theta = (
            self.warm.copy()
            if self.warm is not None and len(self.warm) == d + 1
            else np.r_[np.full(d, math.log(0.5)), math.log(1e-2)]
        )
        low = np.r_[np.full(d, math.log(0.02)), math.log(1e-6)]
        high = np.r_[np.full(d, math.log(20.0)), math.log(1.0)]
        value, grad = self._evidence(theta, x, target, self.steps > 0)
        step = 0.5
        for _ in range(self.steps):
            if grad is None or not np.isfinite(value):
                break
            moved = np.clip(theta + step * grad / max(1.0, float(np.abs(grad).max())), low, high)
            new_value, new_grad = self._evidence(moved, x, target, True)
            if new_value > value:
                theta, value, grad, step = moved, new_value, new_grad, min(step * 1.5, 2.0)
            else:
                step *= 0.4
                if step < 1e-3:
                    break
        if not np.isfinite(value):  # fall back to a safe, smooth kernel
            theta = np.r_[np.full(d, math.log(1.0)), math.log(1e-2)]
        self.theta_ = theta
        self.scale_ = np.exp(theta[:-1])
        k = self._kernel(x, x, self.scale_) + (math.exp(theta[-1]) + 1e-8) * np.eye(len(x))
        self.linv_ = np.linalg.inv(np.linalg.cholesky(k))
        self.alpha_ = self.linv_.T @ (self.linv_ @ target)
        return self

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = self._kernel(x, self.x_, self.scale_)
        mean = k @ self.alpha_
        v = self.linv_ @ k.T
        var = np.maximum(1.0 - (v * v).sum(0), 1e-12)
        return mean * self.sd_ + self.mean_, np.sqrt(var) * self.sd_


class RandomForest:
    """Extremely randomised trees on bootstrap samples; the spread of the trees' predictions
    is the uncertainty. All trees grow together, a level at a time: each level is a few array
    operations over every row of every tree, not a Python call per node.

    Each tree's bootstrap sample holds at most ``rows`` rows (all n while n <= rows), so a
    refit costs no more after a long search than at ``rows`` results: a strategy refits at
    every evaluation, and its own cost must stay below a measurement's."""

    def __init__(
        self,
        trees: int = 30,
        min_leaf: int = 2,
        seed: int = 0,
        tries: int | None = None,
        rows: int | None = 256,
    ) -> None:
        if (tries is not None and tries < 1) or (rows is not None and rows < 1):
            raise ValueError(f"tries and rows are at least 1 (or None), got {tries} and {rows}")
        self.trees, self.min_leaf, self.seed = trees, min_leaf, seed
        self.tries = tries  # dimensions tried per split; None: about half of them
        self.rows = rows  # bootstrap rows per tree; None: n

    def fit(self, x: np.ndarray, y: np.ndarray) -> RandomForest:
        rng = np.random.default_rng(self.seed)
        n, d = x.shape
        tries = max(1, d // 2 + 1) if self.tries is None else min(d, self.tries)
        # Every tree's bootstrap rows, kept grouped by the node they sit in.
        m = n if self.rows is None else min(n, self.rows)
        rows = rng.integers(n, size=self.trees * m)
        node = np.repeat(np.arange(self.trees), m)
        dim = np.full(self.trees, -1)
        value = np.zeros(self.trees)  # the cut of an inner node, the mean of a leaf
        child = np.full(self.trees, -1)  # the left child; the right one is child + 1
        while len(rows):
            level, starts, count = np.unique(node, return_index=True, return_counts=True)
            groups = np.repeat(np.arange(len(level)), count)
            yr = y[rows]
            total = np.add.reduceat(yr, starts)
            square = np.add.reduceat(yr * yr, starts)
            value[level] = total / count
            dims = np.argsort(rng.random((len(level), d)), axis=1)[:, :tries]
            xv = x[rows[:, None], dims[groups]]  # (rows, tries)
            lo, hi = np.minimum.reduceat(xv, starts), np.maximum.reduceat(xv, starts)
            cuts = lo + rng.random(lo.shape) * (hi - lo)
            left = xv <= cuts[groups]
            n_left = np.add.reduceat(left, starts).astype(np.float64)
            s_left = np.add.reduceat(left * yr[:, None], starts)
            q_left = np.add.reduceat(left * (yr * yr)[:, None], starts)
            n_all, s_all, q_all = count[:, None], total[:, None], square[:, None]
            n_right = n_all - n_left
            with np.errstate(divide="ignore", invalid="ignore"):
                # Summed squared deviation of both sides, from counts, sums and squares.
                cost = (q_left - s_left**2 / n_left) + (
                    (q_all - q_left) - (s_all - s_left) ** 2 / n_right
                )
            usable = (hi > lo) & (n_left >= self.min_leaf) & (n_right >= self.min_leaf)
            cost = np.where(usable, cost, np.inf)
            best = np.argmin(cost, axis=1)
            best_cost = cost[np.arange(len(level)), best]
            splits = (count >= 2 * self.min_leaf) & (best_cost < square - total**2 / count - 1e-12)
            parents = level[splits]
            first = len(dim) + 2 * np.arange(len(parents))
            dim[parents] = dims[splits, best[splits]]
            value[parents] = cuts[splits, best[splits]]
            child[parents] = first
            dim = np.concatenate([dim, np.full(2 * len(parents), -1)])
            value = np.concatenate([value, np.zeros(2 * len(parents))])
            child = np.concatenate([child, np.full(2 * len(parents), -1)])
            # Rows of split nodes move to a child; rows of leaves are done.
            moving = splits[groups]
            goes_right = ~left[moving, best[groups[moving]]]
            rows, node = rows[moving], child[node[moving]] + goes_right
            order = np.argsort(node, kind="stable")
            rows, node = rows[order], node[order]
        self.dim_, self.value_, self.child_ = dim, value, child
        return self

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        outputs = self.predict_trees(x)
        return outputs.mean(0), outputs.std(0) + 1e-6

    def predict_trees(self, x: np.ndarray) -> np.ndarray:
        """Every tree's prediction, (trees, len(x)): one row is a draw from the forest."""
        node = np.repeat(np.arange(self.trees), len(x))
        cols = np.tile(np.arange(len(x)), self.trees)
        active = np.arange(len(node))
        while len(active):
            d = self.dim_[node[active]]
            inner = d >= 0
            active, d = active[inner], d[inner]
            n = node[active]
            node[active] = self.child_[n] + (x[cols[active], d] > self.value_[n])
        return self.value_[node].reshape(self.trees, len(x))
