"""The evaluation engine: encoders, retrieval, metrics, calibration. No Django imports here."""
