"""What the daemon accepts from clients that may not be friendly: how often and how many
refused launches it stores, and when a reported refusal is plausible at all.

A refusal changes every later answer for its kernel and device, so a client could steer
predictions (report every good size refused) or fill the database (refusals for made-up
devices). A refusal therefore counts only when the device's limits allow the size and the
same daemon was asked a prediction for that kernel and device before (a launcher asks, then
launches, then reports); and each device, the daemon as a whole, and each kernel on a device
have their caps."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from perfport._core import PerfportError


class RateLimited(PerfportError):
    """Too many refusals: for this device lately, or for the daemon's database in all."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def __reduce__(self) -> tuple[type[RateLimited], tuple[str, float | None]]:
        # Raised in the gate's manager process under --workers: the wait must come across.
        return (RateLimited, (str(self), self.retry_after_s))


class RefusalsFull(PerfportError):
    """The database holds as many client-reported refusals as the daemon stores
    (--max-refusals): its operator's to fix, and retrying does not help."""


class KernelRefusalsFull(PerfportError):
    """A kernel on a device already has as many refused sizes stored as the daemon keeps for
    one pair: retrying does not help (nothing ages them out), so no Retry-After."""


class Implausible(PerfportError):
    """A refusal that no launcher asking this daemon could have met."""


class GateUnavailable(PerfportError):
    """The refusal gate's shared state cannot be reached (its manager process died): the
    daemon's fault, not the client's, and passing (``perfport serve`` starts it again)."""


@dataclass(frozen=True)
class RefusalLimits:
    per_device_per_minute: float = 30.0  # sustained rate; bursts of up to burst
    burst: int = 10
    per_minute: float = 300.0  # all devices together
    per_kernel_and_device: int = 32  # refused sizes kept for one kernel on one device
    total: int = 5000  # client-reported refusals the database may hold
    asked_kept: int = 8192  # (kernel, device) pairs remembered as asked


class _Bucket:
    """A token bucket: ``rate`` tokens a second up to ``capacity``."""

    __slots__ = ("capacity", "last", "rate", "tokens")

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate, self.capacity, self.tokens, self.last = rate, capacity, capacity, now

    def take(self, now: float) -> float:
        """0 when a token was taken, else the seconds until one is there."""
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class RefusalGate:
    """Remembers which (kernel, device) pairs were asked about, and rate-limits refusals per
    device and in all. Thread-safe. Keys are digests, so memory does not grow with what
    clients send."""

    def __init__(
        self, limits: RefusalLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or RefusalLimits()
        self._clock = clock
        self._lock = threading.Lock()
        self._asked: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._devices: OrderedDict[str, _Bucket] = OrderedDict()
        lim = self.limits
        self._all = _Bucket(lim.per_minute / 60.0, max(lim.burst, 1) * 3, clock())

    def asked(self, source_hash: str, fingerprint: str) -> None:
        with self._lock:
            key = (source_hash, fingerprint)
            self._asked[key] = None
            self._asked.move_to_end(key)
            while len(self._asked) > self.limits.asked_kept:
                self._asked.popitem(last=False)

    def was_asked(self, source_hash: str, fingerprint: str) -> bool:
        with self._lock:
            return (source_hash, fingerprint) in self._asked

    def problem(self) -> str | None:
        """Why the gate cannot answer now (one line), or None: what ``/v1/health`` reports."""
        return None

    def take(self, fingerprint: str) -> None:
        """Count one refusal from this device; RateLimited when over its rate or the total."""
        lim = self.limits
        with self._lock:
            now = self._clock()
            bucket = self._devices.get(fingerprint)
            if bucket is None:
                bucket = _Bucket(lim.per_device_per_minute / 60.0, lim.burst, now)
                self._devices[fingerprint] = bucket
                while len(self._devices) > lim.asked_kept:
                    self._devices.popitem(last=False)
            self._devices.move_to_end(fingerprint)
            wait = bucket.take(now) or 0.0
            if wait:
                raise RateLimited(
                    f"too many refusals from this device (at most {lim.per_device_per_minute:g} "
                    f"a minute); retry in {wait:.1f} s",
                    wait,
                )
            wait = self._all.take(now)
            if wait:
                bucket.tokens += 1.0  # not this device's fault: give its token back
                raise RateLimited(
                    f"too many refusals (at most {lim.per_minute:g} a minute from all "
                    f"devices); retry in {wait:.1f} s",
                    wait,
                )
