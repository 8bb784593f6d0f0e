"""Settings for a developer's machine: embedded defaults, debug on."""

from config.settings.base import *  # noqa: F403
from config.settings.env import env_bool

DEBUG = env_bool("DEBUG", True)
