# One image for the web server, the CPU workers and beat. The GPU worker is the same image built
# with TORCH_INDEX_URL="" (PyPI's Linux torch wheels bundle CUDA) and run with the NVIDIA runtime:
#   docker build --build-arg TORCH_INDEX_URL= -t nirdesha:gpu .
ARG PYTHON_VERSION=3.11
FROM python:${PYTHON_VERSION}-slim-bookworm

# The CPU build of torch keeps the default image small; see the comment above for the GPU variant.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HOME=/app/var/hf-cache \
    NIRDESHA_VAR_DIR=/app/var \
    STATIC_ROOT=/app/staticfiles \
    DJANGO_SETTINGS_MODULE=config.settings.production

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin app

WORKDIR /app
COPY requirements.txt .
# torch first, from the chosen index, so that the pinned version is the build the image needs.
RUN if [ -n "$TORCH_INDEX_URL" ]; then \
        pip install --index-url "$TORCH_INDEX_URL" "$(grep -E '^torch==' requirements.txt)"; \
    else \
        pip install "$(grep -E '^torch==' requirements.txt)"; \
    fi \
    && pip install -r requirements.txt

COPY --chown=app:app . .
# Every folder a compose volume mounts is made here, owned by the app user: Docker fills an empty
# named volume from the image's folder, ownership included, so the non-root processes can write to
# it (a path missing from the image would be mounted root-owned). tests/foundation checks the list.
# Static files are collected at build time with throw-away values: production settings refuse to
# import without them, and none of them is used by collectstatic.
RUN SECRET_KEY="collectstatic-only-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
    DATABASE_URL=postgres://build@localhost/build \
    CELERY_BROKER_URL=redis://localhost:6379/0 \
    REDIS_URL=redis://localhost:6379/1 \
    ALLOWED_HOSTS=build \
    python manage.py collectstatic --noinput \
    && mkdir -p /app/var/media /app/var/embedding-cache /app/var/pair-sets /app/var/hf-cache \
        /app/var/gpu-locks /app/var/beat /app/var/store-scratch \
    && chown -R app:app /app/var /app/staticfiles

USER 10001
EXPOSE 8000
# /healthz with the Host header production accepts and the proxy's HTTPS header (scripts/healthcheck.py);
# it fails when the database or the broker is down.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "scripts/healthcheck.py", "http://127.0.0.1:8000/healthz"]
# Threaded workers and body-read deadlines, so that slow clients cannot hold every worker (config/gunicorn.py).
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application", "--bind", "0.0.0.0:8000"]
