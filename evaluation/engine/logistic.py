"""T4's logistic regression solved by Newton's method in float64 torch, for runs on an accelerator.

On a CPU, T4 fits scikit-learn's `LogisticRegression(solver="newton-cholesky")` (classification.py).
At full size a language has 90,000 training pairs of 768 features; each Newton step forms the
769 × 769 Hessian, 1.1e11 multiply-adds, and a fit takes a dozen or more steps. On an H200 machine's
16 cores T4 took 70.4 s for 4 languages at 50,000 items (bench/scoring_scale.py), more than
retrieval over all four languages and their 12 ordered pairs together: the classifiers, not the
accelerator, set the pace of everything after encoding. This module solves the same problem by the
same method where the features are: in float64 on the run's device.

The objective is scikit-learn's for C = 1: the summed log loss plus ½‖w‖²/C, the intercept not
penalised. It is strictly convex, so it has one minimum; both solvers stop when the largest component
of the gradient of the mean objective is below the same tolerance (1e-10), where Newton's quadratic
convergence leaves the coefficients, and the probabilities, within ~1e-9 of each other and of the
exact optimum, far below the 1e-6 at which figures are compared (tests/engine/
test_it_fits_t4_by_newton_in_torch_as_scikit_learn_does.py runs both on a CPU: within 3.1e-15).
"""

from __future__ import annotations

import threading

import numpy as np
import torch

# Armijo's sufficient-decrease constant for the backtracking line search (as in scikit-learn's solver).
SUFFICIENT_DECREASE = 1e-4
# The shortest step the line search tries before it accepts what it has.
SHORTEST_STEP = 2.0**-30


_LINEAR_ALGEBRA_READY: set[torch.device] = set()
_LINEAR_ALGEBRA_LOCK = threading.Lock()


def _ready_linear_algebra(device: torch.device) -> None:
    """Load torch.linalg's solver library for `device` once, from one thread at a time.

    On CUDA, torch loads its solver library (cuSOLVER/MAGMA) lazily on the first linear-algebra call
    of the process, and that loading is not thread-safe: T4 fits its languages on a thread pool, and
    on an H200 the first fits of four languages at once failed with "lazy wrapper should be called
    at most once" (pytorch/pytorch#90613). A 1 × 1 Cholesky factorisation under a lock loads it
    before any fit's own, so the threads' calls find it loaded (the workaround named in that issue;
    tests/gpu/test_it_fits_t4_on_cuda_from_many_threads_at_once.py checks it on a GPU).
    """
    if device.type == "cpu" or device in _LINEAR_ALGEBRA_READY:
        return
    with _LINEAR_ALGEBRA_LOCK:
        if device not in _LINEAR_ALGEBRA_READY:
            one = torch.ones((1, 1), dtype=torch.float64, device=device)
            torch.cholesky_solve(one, torch.linalg.cholesky(one))
            _LINEAR_ALGEBRA_READY.add(device)


class NewtonLogisticRegression:
    """Binary L2-regularised logistic regression on standardised float64 features, all on one device.

    `fit` standardises the training features as scikit-learn's StandardScaler does (the mean and the
    population standard deviation of each feature, a feature indistinguishable from a constant one
    left unscaled) and solves on the device; `decision_function` standardises its input with the
    training statistics and returns the logits on the host. At full size scikit-learn's scaler alone
    took 1.7 s a language on the host (two cores, under cProfile).
    """

    def __init__(self, *, C: float = 1.0, tol: float = 1e-10, max_iter: int = 200, device: str = "cpu") -> None:
        self.C, self.tol, self.max_iter, self.device = C, tol, max_iter, device
        self.coef_ = np.zeros(0)
        self.intercept_ = 0.0
        self.n_iter_ = 0
        self._weights: torch.Tensor | None = None
        self._mean: torch.Tensor | None = None
        self._scale: torch.Tensor | None = None

    def _on_device(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(x, dtype=np.float64)).to(self.device)

    def _standardised(self, features: torch.Tensor) -> torch.Tensor:
        assert self._mean is not None and self._scale is not None
        return (features - self._mean) / self._scale

    def fit(self, x: np.ndarray, y: np.ndarray) -> NewtonLogisticRegression:
        features = self._on_device(x)
        _ready_linear_algebra(features.device)
        n, d = features.shape
        # StandardScaler's statistics: two passes, and its test for a feature that only rounding
        # tells from a constant (Chan, Golub and LeVeque's bound on the two-pass variance's error).
        self._mean = features.mean(dim=0)
        variance = ((features - self._mean) ** 2).mean(dim=0)
        eps = torch.finfo(torch.float64).eps
        constant = variance <= n * eps * variance + (n * self._mean * eps) ** 2
        self._scale = torch.where(constant, torch.ones_like(variance), variance.sqrt())
        # The intercept is a last column of ones, so one product gives the logits.
        ones = torch.ones((n, 1), dtype=torch.float64, device=features.device)
        design = torch.cat([self._standardised(features), ones], dim=1)
        del features
        target = self._on_device(y)
        penalty = torch.full((d + 1,), 1.0 / self.C, dtype=torch.float64, device=design.device)
        penalty[-1] = 0.0

        def objective(weights: torch.Tensor) -> float:
            logits = design @ weights
            # log(1 + e^z) − y·z, summed: softplus is exact for large |z| where log1p(exp(z)) overflows.
            loss = (torch.nn.functional.softplus(logits) - target * logits).sum()
            return float(loss + 0.5 * (penalty * weights * weights).sum())

        weights = torch.zeros(d + 1, dtype=torch.float64, device=design.device)
        value = objective(weights)
        for iteration in range(self.max_iter):
            probabilities = torch.sigmoid(design @ weights)
            gradient = design.T @ (probabilities - target) + penalty * weights
            self.n_iter_ = iteration
            if float(gradient.abs().max()) / n <= self.tol:
                break
            curvature = probabilities * (1.0 - probabilities)
            hessian = design.T @ (design * curvature[:, None])
            hessian.diagonal().add_(penalty)
            step = torch.cholesky_solve(-gradient[:, None], torch.linalg.cholesky(hessian))[:, 0]
            slope = float(gradient @ step)
            length = 1.0
            while True:
                candidate = weights + length * step
                candidate_value = objective(candidate)
                if candidate_value <= value + SUFFICIENT_DECREASE * length * slope or length <= SHORTEST_STEP:
                    break
                length /= 2
            if candidate_value > value:
                # No step along Newton's direction lowers the objective: rounding, not the model, is
                # what is left, so the weights are as good as float64 makes them.
                break
            weights, value = candidate, candidate_value
        else:
            self.n_iter_ = self.max_iter
        self._weights = weights
        solved = weights.cpu().numpy()
        # In the scaled feature space, as scikit-learn's LogisticRegression after its StandardScaler.
        self.coef_, self.intercept_ = solved[:-1], float(solved[-1])
        return self

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        """The logits of raw (unstandardised) features, computed on the device, returned on the host."""
        assert self._weights is not None
        logits = self._standardised(self._on_device(x)) @ self._weights[:-1] + self._weights[-1]
        result: np.ndarray = logits.cpu().numpy()
        return result
