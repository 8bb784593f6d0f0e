"""Expected calibration error, reliability bins and two post-hoc calibrators for binary classifiers.

ECE here is the standard binned estimate over the predicted probability of the POSITIVE class:
15 equal-width bins [0, 1/15), [1/15, 2/15), …, [14/15, 1] (the last bin closed), and

    ECE = Σ_b (n_b / N) · |mean(y_b) − mean(p_b)|

where y_b are the 0/1 labels and p_b the predicted probabilities of the samples in bin b. (The
reference implementation compared mean probability with the accuracy of thresholded labels, which
is not calibration error; that is deliberately not reproduced.)

Calibrators are fitted on a development split and applied to the test split; nothing here ever
sees test labels unless a caller passes them in, which classification.py never does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, overload

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.model_selection import StratifiedGroupKFold

N_BINS = 15


def bin_index(probabilities: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Equal-width bin of each probability; 1.0 falls in the last bin."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64), 0.0, 1.0)
    return np.minimum((p * n_bins).astype(np.int64), n_bins - 1)


# Without weights the ECE is one number; with a weight matrix, one value per resample (row).
@overload
def expected_calibration_error(
    probabilities: np.ndarray, labels: np.ndarray, weights: None = None, n_bins: int = N_BINS
) -> float: ...
@overload
def expected_calibration_error(
    probabilities: np.ndarray, labels: np.ndarray, weights: np.ndarray, n_bins: int = N_BINS
) -> np.ndarray: ...
def expected_calibration_error(
    probabilities: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None, n_bins: int = N_BINS
) -> np.ndarray | float:
    """ECE (see module docstring). With a weight matrix (resamples × N) returns one value per row."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    one_hot = np.zeros((len(p), n_bins))
    one_hot[np.arange(len(p)), bin_index(p, n_bins)] = 1.0
    w = np.ones((1, len(p))) if weights is None else np.atleast_2d(np.asarray(weights, dtype=np.float64))
    # Per bin, Σ y and Σ p over its samples; their absolute difference over N is the bin's share of ECE.
    sum_y = (w * y) @ one_hot
    sum_p = (w * p) @ one_hot
    ece = np.abs(sum_y - sum_p).sum(axis=1) / w.sum(axis=1)
    return float(ece[0]) if weights is None else ece


def reliability_bins(probabilities: np.ndarray, labels: np.ndarray, n_bins: int = N_BINS) -> list[dict[str, Any]]:
    """Per bin: its bounds, sample count, mean predicted probability and mean label (None when empty)."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    bins = bin_index(p, n_bins)
    result = []
    for b in range(n_bins):
        members = bins == b
        count = int(members.sum())
        result.append(
            {
                "lower": b / n_bins,
                "upper": (b + 1) / n_bins,
                "count": count,
                "mean_p": float(p[members].mean()) if count else None,
                "mean_y": float(y[members].mean()) if count else None,
            }
        )
    return result


@dataclass
class HistogramBinning:
    """Replace a probability by the positive rate of the development samples in its bin.

    A bin without development samples keeps the uncalibrated probability (there is nothing to learn).
    """

    n_bins: int = N_BINS
    values: np.ndarray | None = None

    def fit(self, probabilities: np.ndarray, labels: np.ndarray) -> HistogramBinning:
        p = np.asarray(probabilities, dtype=np.float64)
        y = np.asarray(labels, dtype=np.float64)
        bins = bin_index(p, self.n_bins)
        counts = np.bincount(bins, minlength=self.n_bins)
        positives = np.bincount(bins, weights=y, minlength=self.n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.values = np.where(counts > 0, positives / counts, np.nan)
        return self

    def predict(self, probabilities: np.ndarray) -> np.ndarray:
        if self.values is None:
            raise RuntimeError("HistogramBinning.predict before fit")
        p = np.asarray(probabilities, dtype=np.float64)
        mapped = self.values[bin_index(p, self.n_bins)]
        return np.where(np.isnan(mapped), p, mapped)


@dataclass
class TemperatureScaling:
    """p = sigmoid(z / T) with one temperature T fitted by minimising the log loss on dev logits."""

    temperature: float = 1.0

    def fit(self, logits: np.ndarray, labels: np.ndarray) -> TemperatureScaling:
        z = np.asarray(logits, dtype=np.float64)
        y = np.asarray(labels, dtype=np.float64)

        def negative_log_likelihood(log_t: float) -> float:
            scaled = z / np.exp(log_t)
            # log(1 + e^s) − y·s, computed stably.
            return float(np.mean(np.logaddexp(0.0, scaled) - y * scaled))

        # Solved to 1e-12 in log T (scipy's default, 1e-5, would leave the temperature, hence every
        # temperature-scaled probability, wherever the iterations stopped within that tolerance).
        found = minimize_scalar(
            negative_log_likelihood, bounds=(-6.0, 6.0), method="bounded", options={"xatol": 1e-12, "maxiter": 2000}
        )
        self.temperature = float(np.exp(found.x))
        return self

    def predict(self, logits: np.ndarray) -> np.ndarray:
        probabilities: np.ndarray = expit(np.asarray(logits, dtype=np.float64) / self.temperature)
        return probabilities


CALIBRATORS = ("hist", "temp")
# How much lower histogram binning's cross-validated ECE must be for it to replace temperature
# scaling: half a percentage point of ECE, far above rounding noise (~1e-9 with the float64
# classifier) and below the differences between calibrators that matter (several points).
CALIBRATOR_MARGIN = 0.005


class Calibrator(Protocol):
    """A fitted calibrator: histogram binning predicts from probabilities, temperature scaling from logits."""

    def predict(self, values: np.ndarray, /) -> np.ndarray: ...


def fit_calibrator(name: str, probabilities: np.ndarray, logits: np.ndarray, labels: np.ndarray) -> Calibrator:
    if name == "hist":
        return HistogramBinning().fit(probabilities, labels)
    if name == "temp":
        return TemperatureScaling().fit(logits, labels)
    raise ValueError(f"unknown calibrator {name!r}")


def apply_calibrator(name: str, calibrator: Calibrator, probabilities: np.ndarray, logits: np.ndarray) -> np.ndarray:
    return calibrator.predict(probabilities if name == "hist" else logits)


def calibration_folds(labels: np.ndarray, groups: np.ndarray | None, *, folds: int = 5, seed: int = 0) -> np.ndarray:
    """The cross-validation fold of every sample: stratified by label, and grouped so that all
    samples of one group (item) share a fold. No groups: every sample is its own group.

    The folds are scikit-learn's StratifiedGroupKFold(shuffle=True, random_state=seed), assigned by
    stratified_group_folds where it can (the same folds, 10 times faster: bench/calibration_folds.py),
    and by scikit-learn itself otherwise."""
    labels = np.asarray(labels)
    groups = np.arange(len(labels)) if groups is None else np.asarray(groups)
    n_splits = min(folds, len(np.unique(groups)))
    if n_splits < 2:
        return np.full(len(labels), -1, dtype=np.int64)
    fast = stratified_group_folds(labels, groups, n_splits=n_splits, seed=seed)
    return fast if fast is not None else scikit_learn_group_folds(labels, groups, n_splits=n_splits, seed=seed)


def scikit_learn_group_folds(labels: np.ndarray, groups: np.ndarray, *, n_splits: int, seed: int) -> np.ndarray:
    """The fold of every sample as scikit-learn's StratifiedGroupKFold(shuffle=True) assigns it: the
    reference that stratified_group_folds reproduces, and the answer where it declines."""
    fold_of = np.full(len(labels), -1, dtype=np.int64)
    splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    for fold, (_, held_out) in enumerate(splitter.split(np.zeros(len(labels)), labels, groups)):
        fold_of[held_out] = fold
    return fold_of


# numpy sums fewer than eight values one after another, from the first (longer runs it sums
# pairwise), which the scalar arithmetic below repeats operation for operation.
_SEQUENTIAL_SUM_LIMIT = 8


def stratified_group_folds(labels: np.ndarray, groups: np.ndarray, *, n_splits: int, seed: int) -> np.ndarray | None:
    """The fold of every sample exactly as StratifiedGroupKFold(n_splits, shuffle=True, random_state=seed)
    of scikit-learn 1.9 assigns it, or None where this function does not reproduce it (then the
    caller asks scikit-learn).

    scikit-learn assigns the groups greedily, one at a time, each to the fold that keeps the class
    proportions most even (the mean over classes of the standard deviation across folds of each
    fold's share of the class), ties within np.isclose going to the smaller fold. It evaluates every
    candidate fold with numpy calls on a folds × classes array, about 0.1 ms a group: 1.2 s for one
    language's dev split at 50,000 items (10,000 items' 30,000 pairs) on a 2-core Xeon, holding
    Python's lock, against 0.11 s here (bench/calibration_folds.py). The same floating-point operations
    in the same order on Python floats (each of +, −, ×, ÷ and the square root is correctly rounded
    in both) give the same numbers bit for bit, so the same comparisons and the same folds; numpy
    sums fewer than eight values left to right, so this holds while there are fewer than eight folds
    and classes. The test of this function compares it with scikit-learn on many inputs.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.dtype.kind not in "biu" or len(labels) != len(groups):
        return None
    _, y_inv, y_cnt = np.unique(labels, return_inverse=True, return_counts=True)
    n_classes = len(y_cnt)
    _, groups_inv, groups_cnt = np.unique(groups, return_inverse=True, return_counts=True)
    n_groups = len(groups_cnt)
    # scikit-learn raises or warns in these cases; let it.
    if not 2 <= n_classes < _SEQUENTIAL_SUM_LIMIT or n_splits >= _SEQUENTIAL_SUM_LIMIT:
        return None
    if n_splits > y_cnt.min() or n_splits > n_groups:
        return None
    y_counts_per_group = np.zeros((n_groups, n_classes))
    np.add.at(y_counts_per_group, (groups_inv, y_inv), 1)
    permutation = np.arange(n_groups)
    np.random.RandomState(seed).shuffle(permutation)
    y_counts_per_group = y_counts_per_group[permutation]
    inverse = np.empty_like(permutation)
    inverse[permutation] = np.arange(n_groups)
    groups_inv = inverse[groups_inv]
    order = np.argsort(-np.std(y_counts_per_group, axis=1), kind="stable")

    class_totals = [float(count) for count in y_cnt]
    fold_counts = [[0.0] * n_classes for _ in range(n_splits)]
    fold_of_group = np.empty(n_groups, dtype=np.int64)
    counts_of_group = y_counts_per_group.tolist()
    for group in order.tolist():
        counts = counts_of_group[group]
        best = _best_fold(fold_counts, class_totals, counts)
        row = fold_counts[best]
        for c in range(n_classes):
            row[c] += counts[c]
        fold_of_group[group] = best
    return fold_of_group[groups_inv]


def _best_fold(fold_counts: list[list[float]], class_totals: list[float], counts: list[float]) -> int:
    """StratifiedGroupKFold._find_best_fold on Python floats (see stratified_group_folds)."""
    n_splits, n_classes = len(fold_counts), len(class_totals)
    best, min_eval, min_samples = -1, float("inf"), float("inf")
    for candidate in range(n_splits):
        std_sum = 0.0
        for c in range(n_classes):
            total = class_totals[c]
            shares = [
                ((fold_counts[f][c] + counts[c]) if f == candidate else fold_counts[f][c]) / total
                for f in range(n_splits)
            ]
            mean = shares[0]
            for share in shares[1:]:
                mean += share
            mean /= n_splits
            squares = (shares[0] - mean) * (shares[0] - mean)
            for share in shares[1:]:
                squares += (share - mean) * (share - mean)
            std = math.sqrt(squares / n_splits)
            std_sum = std if c == 0 else std_sum + std
        fold_eval = std_sum / n_classes
        samples = fold_counts[candidate][0]
        for c in range(1, n_classes):
            samples += fold_counts[candidate][c]
        # np.isclose(fold_eval, min_eval) with its default tolerances: rtol 1e-5, atol 1e-8.
        close = fold_eval == min_eval or (
            math.isfinite(min_eval) and abs(fold_eval - min_eval) <= 1e-08 + 1e-05 * abs(min_eval)
        )
        if fold_eval < min_eval or (close and samples < min_samples):
            best, min_eval, min_samples = candidate, fold_eval, samples
    return best


def choose_calibrator(
    probabilities: np.ndarray,
    logits: np.ndarray,
    labels: np.ndarray,
    *,
    groups: np.ndarray | None = None,
    folds: int = 5,
    seed: int = 0,
    fold_of: np.ndarray | None = None,
) -> tuple[str, dict[str, float]]:
    """Pick the calibrator by cross-validated ECE on the development split alone (with a margin, below).

    In-sample ECE would always favour histogram binning (it fits the bins it is scored on), so each
    calibrator is fitted on k−1 folds of dev and scored on the held-out fold. Folds are stratified by
    label and, when `groups` (the item of each pair) is given, grouped by item: the pairs of one
    persona share its embedding, so letting them fall on both sides of a fold would leak.

    `fold_of`: those folds when they were computed before (T4 reads them from the pair-set store), so
    that a run does not assign them again.
    """
    labels = np.asarray(labels)
    if fold_of is None:
        fold_of = calibration_folds(labels, groups, folds=folds, seed=seed)
    scores: dict[str, float] = {}
    for name in CALIBRATORS:
        errors: list[float] = []
        sizes: list[int] = []
        for fold in range(folds):
            held_out = fold_of == fold
            if held_out.all() or not held_out.any():
                continue
            calibrator = fit_calibrator(name, probabilities[~held_out], logits[~held_out], labels[~held_out])
            predicted = apply_calibrator(name, calibrator, probabilities[held_out], logits[held_out])
            errors.append(expected_calibration_error(predicted, labels[held_out]))
            sizes.append(int(held_out.sum()))
        scores[name] = float(np.average(errors, weights=sizes)) if errors else float("nan")
    return preferred_calibrator(scores), scores


def preferred_calibrator(cross_validated_ece: dict[str, float]) -> str:
    """Temperature scaling unless histogram binning's cross-validated ECE is lower by CALIBRATOR_MARGIN.

    Temperature scaling (one parameter, smooth) is the default: a choice made on a last-bit difference
    of two cross-validated ECEs would flip with the processor's rounding and move the reported ECE by
    a whole calibrator's difference. A NaN score (no fold could be held out) never wins.
    """
    hist, temp = (float(np.nan_to_num(cross_validated_ece[name], nan=np.inf)) for name in ("hist", "temp"))
    return "hist" if hist < temp - CALIBRATOR_MARGIN else "temp"
