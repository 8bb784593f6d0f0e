"""Settings for a developer's machine: embedded defaults, debug on."""

from config.settings.base import *  # noqa: F403
from config.settings.env import env_bool

DEBUG = env_bool("DEBUG", True)
# A developer's worker takes the gpu queue on whatever machine it runs (scripts/start, Procfile.dev).
EVALUATION_ALLOW_CPU = env_bool("EVALUATION_ALLOW_CPU", True)
