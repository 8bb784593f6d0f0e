import gc
import importlib
import os
import uuid

import pytest
import threadpoolctl

# scripts/test runs several test processes on the cores (pytest-xdist). torch's and MKL's thread pools
# would each take every core and fight over them: encoding the validation sample with MiniLM took
# 58 s alone with two threads and 106 s with one, but 112 s with two threads beside the other test
# process. One thread each, set before anything imports torch (Django starts without it), for these
# processes and the workers and commands they start.
#
# numpy is imported before this file is read: pytest-django sets Django up first, and the models import
# it. Its OpenBLAS had by then started one thread per core, and with two test processes on two cores a
# matrix product's threads waited for each other: scikit-learn's Newton fits in
# test_it_fits_t4_by_newton_in_torch_as_scikit_learn_does.py took 5.2 s in the fast tier against 0.6 s
# alone. So the thread pools already loaded are held to one thread as well.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")
    threadpoolctl.threadpool_limits(1)


def pytest_collection_finish(session):
    """Keep the garbage collector from walking again and again through what collection imported.

    A test process holds about 900,000 objects once every test module is imported (torch, transformers,
    mteb, Django), and each full collection walks all of them: with two fast-tier processes, full
    collections took 9-14 s of each process's run. Frozen after one last collection, they are left
    out of every later one (6 s a process then). What the tests create is collected as before.
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _isolated_cache():
    """Every test starts from an empty cache, so cached pages never leak between tests."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (Debian's build; Playwright never downloads one)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM_FLAGS, chromium_path

    # Playwright's sync API runs an event loop in this thread; the ORM calls that tests make
    # between page actions are still plain synchronous calls.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            yield chromium
            chromium.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(browser):
    """A fresh browser page that fails the test on any console error or uncaught page exception."""
    from tests.browser import watch_errors

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = watch_errors(page)
    page.console_errors = errors
    yield page
    context.close()
    assert not errors, f"Browser console errors: {errors}"


@pytest.fixture(autouse=True)
def _migrated_rows_in_database_tests(request):
    """Put back the rows the data migrations write (13 languages, the site's identity), for every test
    that uses the database.

    A transactional test empties every table when it finishes, so the rows the migration wrote are
    gone for whatever test runs next in that process; serialized_rollback cannot restore them in tests
    that drive Playwright. pytest-django runs transactional tests last, but pytest-xdist's group
    scheduling (`--dist loadgroup`, scripts/test) hands a process its tests in another order, so a
    plain `db` test may come after one. A transactional test gets them back for good; a plain test,
    inside its own transaction, only when they are missing (one count query otherwise).
    """
    marker = request.node.get_closest_marker("django_db")
    transactional = bool(marker and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])))
    transactional = transactional or bool({"transactional_db", "live_server"} & set(request.fixturenames))
    if transactional:
        request.getfixturevalue("transactional_db")
    elif marker or "db" in request.fixturenames:
        request.getfixturevalue("db")
    else:
        return
    from django.apps import apps

    from evaluation.engine.languages import LANGUAGES
    from evaluation.models import Language

    if transactional or Language.objects.count() < len(LANGUAGES):
        importlib.import_module("evaluation.migrations.0002_seed_languages").seed_languages(apps, None)
    from leaderboard.models import SiteIdentity

    if not SiteIdentity.objects.exists():
        # Through the model itself, whose saving makes this process forget the identity it had read.
        SiteIdentity.objects.create(key=uuid.uuid4())


@pytest.fixture(autouse=True)
def _no_files_of_earlier_ids(request):
    """Empty the media folder before a test that restarts the database's id sequences.

    Run artefacts are stored under paths named by the run's id. A test that resets the sequences
    gets ids an earlier test in the same process already used, and would otherwise read that test's
    rank files and bootstrap replicates as its own runs'.
    """
    marker = request.node.get_closest_marker("django_db")
    if not (marker and marker.kwargs.get("reset_sequences")):
        return
    import shutil

    from django.conf import settings

    shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)


@pytest.fixture(scope="session")
def minilm_cache(tmp_path_factory):
    """An embedding cache holding all-MiniLM-L6-v2's embeddings of the validation sample (tests/minilm_cache.py)."""
    from tests.minilm_cache import encode_validation_sample

    return encode_validation_sample(tmp_path_factory.mktemp("minilm-cache"))
