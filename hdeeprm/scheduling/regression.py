"""Online run-time regression trained with an asymmetric, weighted loss (thesis 4.2.4).

Each job is described at submission by the 20 features of thesis Table 4.2 (requested time,
the user's last three run times and their averages, requested cores and the user's average
request, the user's running jobs, the break since their last completion, time of day and of
week as cosine/sine pairs). The model is a degree-2 polynomial ``w . Phi(x)`` with
``Phi(x) = (1, x_i, x_i^2, x_i x_l)`` (1 + 2n + n(n-1)/2 = 231 terms), fitted online with the
Normalized Adaptive Gradient (NAG, Ross, Mineiro and Langford 2013) plus an L2 penalty: each
completed job is one update, so the model learns as the trace unfolds, with no look-ahead.

The loss of predicting ``f`` for a job that ran ``p`` (Table 4.3, Eq. 4.3):

* ``gamma * L_over(f - p)`` when ``f >= p``, ``gamma * L_under(p - f)`` otherwise;
* ``L`` is ``squared`` (``z^2``) or ``linear`` (``z``);
* ``gamma`` is ``constant`` (1), ``short_wide`` (5 + log(q/p)), ``long_narrow`` (5 + log(p/q)),
  ``small_area`` (11 + log(1/(q p))) or ``large_area`` (log(q p)), floored at 1e-3 so it stays
  positive for any job (the thesis chose its constants for "typical" jobs).

E-Loss (the thesis's best triple) is squared over-prediction, linear under-prediction and the
``large_area`` weight. Predictions are clamped to [1 s, requested time].
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from hdeeprm.scheduling.config import E_LOSS, LossSpec

DAY = 86400.0
WEEK = 7 * DAY
NB_FEATURES = 20
_ROWS, _COLS = np.triu_indices(NB_FEATURES, k=1)


def _weight(name: str, q: float, p: float) -> float:
    p = max(p, 1.0)
    q = max(q, 1.0)
    if name == "constant":
        value = 1.0
    elif name == "short_wide":
        value = 5.0 + math.log(q / p)
    elif name == "long_narrow":
        value = 5.0 + math.log(p / q)
    elif name == "small_area":
        value = 11.0 + math.log(1.0 / (q * p))
    elif name == "large_area":
        value = math.log(q * p)
    else:
        raise ValueError(f"unknown weight {name!r}")
    return max(value, 1e-3)


def loss_gradient(loss: LossSpec, f: float, p: float, q: float) -> float:
    """d loss / d prediction for prediction ``f``, real run time ``p``, ``q`` cores."""
    gamma = _weight(loss.weight, q, p)
    if f >= p:
        return gamma * (2.0 * (f - p) if loss.over == "squared" else 1.0)
    return -gamma * (2.0 * (p - f) if loss.under == "squared" else 1.0)


def loss_value(loss: LossSpec, f: float, p: float, q: float) -> float:
    """The loss itself (for reports such as thesis Table 4.8)."""
    gamma = _weight(loss.weight, q, p)
    if f >= p:
        z = f - p
        return gamma * (z * z if loss.over == "squared" else z)
    z = p - f
    return gamma * (z * z if loss.under == "squared" else z)


class _User:
    __slots__ = ("last", "run_sum", "run_count", "req_sum", "req_count", "running", "last_end")

    def __init__(self) -> None:
        self.last: deque[float] = deque(maxlen=3)
        self.run_sum = 0.0
        self.run_count = 0
        self.req_sum = 0.0
        self.req_count = 0
        #: seq -> (start, cores) of the user's running jobs.
        self.running: dict[int, tuple[float, int]] = {}
        self.last_end: float | None = None


class OnlineRegression:
    """The thesis's online regression predictor (see the module docstring).

    Args:
        loss: basis losses and weight; E-Loss by default.
        eta: NAG learning rate (seconds of prediction per unit step).
        l2: L2 regularisation strength.
    """

    def __init__(self, loss: LossSpec = E_LOSS, eta: float = 50.0, l2: float = 1e-6) -> None:
        self.loss = loss
        self.eta = eta
        self.l2 = l2
        size = 1 + 2 * NB_FEATURES + len(_ROWS)
        self.w = np.zeros(size)
        self.scale = np.zeros(size)
        self.grad_sq = np.zeros(size)
        self.norm = 0.0
        self.t = 0
        self._users: dict[int, _User] = {}
        self._features: dict[int, np.ndarray] = {}

    def _user(self, job: Any) -> _User:
        key = job.user if job.user is not None else -1
        user = self._users.get(key)
        if user is None:
            user = self._users[key] = _User()
        return user

    def features(self, job: Any, now: float) -> np.ndarray:
        """Table 4.2's features of ``job`` at its submission ``now``."""
        u = self._user(job)
        last = list(u.last)[::-1]  # most recent first
        p1, p2, p3 = (last + [0.0, 0.0, 0.0])[:3]
        ave2 = sum(last[:2]) / len(last[:2]) if last else 0.0
        ave3 = sum(last[:3]) / len(last[:3]) if last else 0.0
        ave_all = u.run_sum / u.run_count if u.run_count else 0.0
        q = float(job.res)
        ave_q = u.req_sum / u.req_count if u.req_count else q
        running = u.running.values()
        n_run = len(u.running)
        ave_curr_q = sum(r for _, r in running) / n_run if n_run else 0.0
        elapsed = [now - s for s, _ in running]
        req = job.req if math.isfinite(job.req) else 0.0
        day = 2 * math.pi * (now % DAY) / DAY
        week = 2 * math.pi * (now % WEEK) / WEEK
        x = np.array(
            [
                req,
                p1,
                p2,
                p3,
                ave2,
                ave3,
                ave_all,
                q,
                ave_q,
                q / ave_q if ave_q else 1.0,
                ave_curr_q,
                float(n_run),
                max(elapsed, default=0.0),
                sum(elapsed),
                float(sum(r for _, r in running)),
                now - u.last_end if u.last_end is not None else 0.0,
                math.cos(day),
                math.sin(day),
                math.cos(week),
                math.sin(week),
            ]
        )
        u.req_sum += q
        u.req_count += 1
        return x

    @staticmethod
    def basis(x: np.ndarray) -> np.ndarray:
        """``Phi(x) = (1, x, x^2, x_i x_l for i < l)``."""
        return np.concatenate(([1.0], x, x * x, x[_ROWS] * x[_COLS]))

    def predict(self, job: Any, now: float) -> float:
        phi = self.basis(self.features(job, now))
        self._features[job.seq] = phi
        value = float(self.w @ phi)
        req = job.req if math.isfinite(job.req) else math.inf
        if not math.isfinite(value):
            value = req
        return max(1.0, min(value, req))

    def started(self, job: Any, now: float) -> None:
        self._user(job).running[job.seq] = (now, job.res)

    def observe(self, job: Any, run_time: float, now: float) -> None:
        u = self._user(job)
        u.running.pop(job.seq, None)
        u.last.append(run_time)
        u.run_sum += run_time
        u.run_count += 1
        u.last_end = now
        phi = self._features.pop(job.seq, None)
        if phi is not None:
            self.update(phi, run_time, float(job.res))

    def update(self, phi: np.ndarray, p: float, q: float) -> None:
        """One NAG step on example ``phi`` with real run time ``p``."""
        w, scale = self.w, self.scale
        mag = np.abs(phi)
        grow = mag > scale
        if grow.any():
            old = scale[grow]
            w[grow] *= np.where(old > 0, (old * old) / (mag[grow] ** 2), 1.0)
            scale[grow] = mag[grow]
        live = scale > 0
        f = float(w @ phi)
        self.t += 1
        self.norm += float(np.sum((phi[live] / scale[live]) ** 2))
        g = loss_gradient(self.loss, f, p, q) * phi + self.l2 * w
        self.grad_sq += g * g
        step = live & (self.grad_sq > 0)
        rate = self.eta * math.sqrt(self.t / self.norm) if self.norm > 0 else 0.0
        w[step] -= rate * g[step] / (scale[step] * np.sqrt(self.grad_sq[step]))
