"""The prototype of performance_forest+novel, kept only because nested_majority.py imports it:
the plain forest's choice where the scenario is covered by its device's training data, the
+fixed rule (fall back to the device's best fixed size unless the neighbours' gain is > 2
standard errors) where it is not. perfport now ships this method as
``WgPerformanceForest(fallback=True, novelty=alpha)`` (perfport.wg.predictors.novelty.DeviceNovelty);
alpha_sweep.py evaluates the shipped class.

Coverage (a split-conformal novelty test, per device set-up): the distance from the scenario to
the nearest training scenario of its device, in the standardised non-device features (kernel and
data), against the calibration distances: for every training scenario of the device, the
distance to the nearest training scenario of that device with a different kernel (kernel
features differ), i.e. what a kernel new to training looks like from inside the training data.
p = (1 + #{calibration >= test}) / (n + 1); not covered where p < alpha (0.05, fixed a priori).
"""

import numpy as np

from perfport.wg.predictors.forest import WgPerformanceForest


class Covered(WgPerformanceForest):
    def __init__(self, alpha=0.05, seed=0):
        super().__init__(fallback=False, seed=seed)
        self.alpha = alpha
        self.name = "performance_forest+covered"

    def fit(self, data):
        super().fit(data)
        x = np.asarray(data.features, dtype=np.float64)
        names = list(data.feature_names)
        self.use_ = np.array([i for i, n in enumerate(names) if not n.startswith("device_")])
        kcols = [i for i, n in enumerate(names) if n.startswith("kernel_")]
        self.zmean_ = x[:, self.use_].mean(0)
        sd = x[:, self.use_].std(0)
        self.zscale_ = np.where(sd > 0, sd, 1.0)
        z = (x[:, self.use_] - self.zmean_) / self.zscale_
        group = np.unique(x[:, kcols], axis=0, return_inverse=True)[1]
        # A numpy bytes array strips trailing zero bytes, which would break pvalue's lookup;
        # no device key of the shipped dataset ends in one.
        keys = np.array([x[i, self.device_columns_].tobytes() for i in range(len(data))])
        self.cover_ = {}
        for key in set(keys):
            rows = keys == key
            zd, gd = z[rows], group[rows]
            dist = np.sqrt(((zd[:, None] - zd[None]) ** 2).sum(-1))
            dist[gd[:, None] == gd[None]] = np.inf
            cal = dist.min(1)
            self.cover_[key] = (zd, np.sort(cal[np.isfinite(cal)]))
        return self

    def pvalue(self, x):
        x = np.asarray(x, dtype=np.float64)
        key = x[self.device_columns_].tobytes()
        if key not in self.cover_:
            return 0.0  # a device training has not seen: not covered
        zd, cal = self.cover_[key]
        if not len(cal):
            return 0.0
        z = (x[self.use_] - self.zmean_) / self.zscale_
        d = np.sqrt(((zd - z) ** 2).sum(-1)).min()
        return (1 + (len(cal) - np.searchsorted(cal, d, side="left"))) / (len(cal) + 1)

    def propose(self, x, max_wg, refused):
        self.fallback = self.pvalue(x) < self.alpha
        return super().propose(x, max_wg, refused)
