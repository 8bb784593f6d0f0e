"""Stand-ins for what tests must not reach: the Hugging Face Hub (hub.py) and downloaded models (models.py)."""
