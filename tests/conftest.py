import pytest


@pytest.fixture(autouse=True)
def _isolated_cache():
    """Every test starts from an empty cache, so cached pages never leak between tests."""
    from django.core.cache import cache

    cache.clear()
    yield
