"""The evaluation engine: encoders, retrieval, metrics, calibration. No Django imports here."""

# The engine version is part of every run's identity (duplicate-submission key), so it changes
# whenever a change to the engine could change a score.
ENGINE_VERSION = "2.1.0"

# One seed for everything random in an evaluation (bootstrap resamples, T4 pair set, T5's tie order), recorded
# in every manifest so that a run can be reproduced exactly.
DEFAULT_SEED = 20250926
