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
    """Extremely randomised trees, grown in numpy; the spread of the trees' predictions is
    the uncertainty."""

    def __init__(self, trees: int = 30, min_leaf: int = 2, seed: int = 0) -> None:
        self.trees, self.min_leaf, self.seed = trees, min_leaf, seed

    def fit(self, x: np.ndarray, y: np.ndarray) -> RandomForest:
        rng = np.random.default_rng(self.seed)
        self.forest_ = [
            self._grow(x, y, rng.integers(len(x), size=len(x)), rng) for _ in range(self.trees)
        ]
        return self

    def _grow(
        self, x: np.ndarray, y: np.ndarray, rows: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, ...]:
        """A tree as arrays: split dimension (-1 at leaves), cut or leaf value, children."""
        dim: list[int] = []
        cut: list[float] = []
        left: list[int] = []
        right: list[int] = []
        stack = [(rows, -1, False)]
        while stack:
            rows, parent, is_right = stack.pop()
            me = len(dim)
            if parent >= 0:
                (right if is_right else left)[parent] = me
            split = self._split(x[rows], y[rows], rng) if len(rows) >= 2 * self.min_leaf else None
            dim.append(-1 if split is None else split[0])
            cut.append(float(y[rows].mean()) if split is None else split[1])
            left.append(-1)
            right.append(-1)
            if split is not None:
                go_left = x[rows, split[0]] <= split[1]
                stack.append((rows[~go_left], me, True))
                stack.append((rows[go_left], me, False))
        return np.array(dim), np.array(cut), np.array(left), np.array(right)

    def _split(
        self, x: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> tuple[int, float] | None:
        # One random cut in each of about half the dimensions, all scored at once: the cost of a
        # split is the summed squared deviation of both sides, from counts, sums and squares.
        dims = rng.permutation(x.shape[1])[: max(1, x.shape[1] // 2 + 1)]
        lo, hi = x[:, dims].min(0), x[:, dims].max(0)
        cuts = lo + rng.random(len(dims)) * (hi - lo)
        left = x[:, dims] <= cuts
        n = float(len(y))
        n_left = left.sum(0).astype(np.float64)
        s_left, q_left = y @ left, (y * y) @ left
        s, q = y.sum(), (y * y).sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = (q_left - s_left**2 / n_left) + ((q - q_left) - (s - s_left) ** 2 / (n - n_left))
        usable = (hi > lo) & (n_left >= self.min_leaf) & (n - n_left >= self.min_leaf)
        cost = np.where(usable, cost, np.inf)
        k = int(np.argmin(cost))
        if not np.isfinite(cost[k]) or cost[k] >= q - s * s / n - 1e-12:
            return None
        return int(dims[k]), float(cuts[k])

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        outputs = np.stack([self._predict_tree(tree, x) for tree in self.forest_])
        return outputs.mean(0), outputs.std(0) + 1e-6

    @staticmethod
    def _predict_tree(tree: tuple[np.ndarray, ...], x: np.ndarray) -> np.ndarray:
        dim, cut, left, right = tree
        node = np.zeros(len(x), dtype=np.int64)
        rows = np.arange(len(x))
        while True:
            d = dim[node]
            inner = d >= 0
            if not inner.any():
                return cut[node]
            r, n = rows[inner], node[inner]
            node[inner] = np.where(x[r, d[inner]] <= cut[n], left[n], right[n])
