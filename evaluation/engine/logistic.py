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
test_it_fits_t4_on_the_runs_device_as_scikit_learn_does.py runs both on a CPU).
"""

from __future__ import annotations

import numpy as np
import torch

# Armijo's sufficient-decrease constant for the backtracking line search (as in scikit-learn's solver).
SUFFICIENT_DECREASE = 1e-4
# The shortest step the line search tries before it accepts what it has.
SHORTEST_STEP = 2.0**-30


class NewtonLogisticRegression:
    """Binary L2-regularised logistic regression on already standardised float64 features."""

    def __init__(self, *, C: float = 1.0, tol: float = 1e-10, max_iter: int = 200, device: str = "cpu") -> None:
        self.C, self.tol, self.max_iter, self.device = C, tol, max_iter, device
        self.coef_ = np.zeros(0)
        self.intercept_ = 0.0
        self.n_iter_ = 0

    def fit(self, x: np.ndarray, y: np.ndarray) -> NewtonLogisticRegression:
        features = torch.as_tensor(np.asarray(x, dtype=np.float64), device=self.device)
        n, d = features.shape
        # The intercept is a last column of ones, so one product gives the logits.
        design = torch.cat([features, torch.ones((n, 1), dtype=torch.float64, device=self.device)], dim=1)
        del features
        target = torch.as_tensor(np.asarray(y, dtype=np.float64), device=self.device)
        penalty = torch.full((d + 1,), 1.0 / self.C, dtype=torch.float64, device=self.device)
        penalty[-1] = 0.0

        def objective(weights: torch.Tensor) -> float:
            logits = design @ weights
            # log(1 + e^z) − y·z, summed: softplus is exact for large |z| where log1p(exp(z)) overflows.
            loss = (torch.nn.functional.softplus(logits) - target * logits).sum()
            return float(loss + 0.5 * (penalty * weights * weights).sum())

        weights = torch.zeros(d + 1, dtype=torch.float64, device=self.device)
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
        solved = weights.cpu().numpy()
        self.coef_, self.intercept_ = solved[:-1], float(solved[-1])
        return self

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        """The logits, computed on the host as scikit-learn computes them (x @ coef + intercept)."""
        logits: np.ndarray = np.asarray(x, dtype=np.float64) @ self.coef_ + self.intercept_
        return logits
