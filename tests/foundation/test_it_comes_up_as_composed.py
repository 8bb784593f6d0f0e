"""The compose stack would come up as written (read as Docker reads it; no Docker daemon needed).

Every folder a volume mounts into the app image is made and owned by the app user there; each service
checks its own health (web its /healthz, each worker a ping of itself by name, beat its schedule file);
a one-shot migrate runs before anything that reads the schema; Caddy terminates TLS in front of web;
and every deploy value comes from .env, whose example holds all that production needs to start.
"""

from __future__ import annotations

import re
import shlex

import pytest
import yaml

from tests.data import REPO_ROOT
from tests.deployment import env_file_values, production_check, required_settings

APP_USER, APP_UID = "app", "10001"


def compose() -> dict:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def app_services() -> dict[str, dict]:
    """The services that run the project's image (built from the Dockerfile)."""
    return {name: service for name, service in compose()["services"].items() if "build" in service}


def dockerfile_commands() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", (REPO_ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def shell_words(run: str) -> list[list[str]]:
    """The simple commands of a RUN line (split at && and ;)."""
    return [shlex.split(part) for part in re.split(r"&&|;", run) if part.strip()]


def made_and_owned() -> tuple[set[str], set[str]]:
    made, owned = set(), set()
    for instruction, arguments in dockerfile_commands():
        if instruction != "RUN":
            continue
        for words in shell_words(arguments):
            if words[:2] == ["mkdir", "-p"]:
                made.update(words[2:])
            if words[:3] == ["chown", "-R", f"{APP_USER}:{APP_USER}"]:
                # Ownership given after the folders were made covers them and everything below.
                owned.update(path for path in words[3:] if any(m == path or m.startswith(f"{path}/") for m in made))
    return made, owned


def health_test(service: dict) -> str:
    test = service.get("healthcheck", {}).get("test", [])
    return " ".join(test) if isinstance(test, list) else str(test)


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_it_makes_every_mounted_folder_in_the_image_owned_by_the_app_user():
    commands = dockerfile_commands()
    user_made = [
        words
        for instruction, arguments in commands
        if instruction == "RUN"
        for words in shell_words(arguments)
        if words[:1] == ["useradd"]
    ]
    assert user_made and option(user_made[0], "--uid") == APP_UID and user_made[0][-1] == APP_USER
    assert [arguments for instruction, arguments in commands if instruction == "USER"][-1] == APP_UID
    made, owned = made_and_owned()
    for name, service in app_services().items():
        for volume in service.get("volumes", []):
            source, target = volume.split(":")[:2]
            if source.startswith((".", "/")):
                continue  # A bind mount of the host's own file, not a volume the image fills.
            assert target in made, f"{name}: {target} is mounted but the image never makes it"
            assert any(target == path or target.startswith(f"{path}/") for path in owned), (
                f"{name}: {target} is not owned by {APP_USER} in the image"
            )


def test_it_gives_each_service_a_health_check_that_fits_its_command():
    services = compose()["services"]
    for name, service in app_services().items():
        command = service.get("command")
        if name == "migrate":
            assert service["healthcheck"] == {"disable": True} and service["restart"] == "no"
            assert command == ["python", "manage.py", "migrate", "--noinput"]
            continue
        test = health_test(service)
        if command is None or "gunicorn" in command:
            # The image's CMD (or a gunicorn command): the web server, asked for /healthz.
            assert "healthcheck.py" in test and "/healthz" in test, name
        elif command[:4] == ["celery", "-A", "config", "worker"]:
            worker_name = option(command, "-n")
            assert worker_name.endswith("@%h"), name
            assert f"inspect ping -d {worker_name.removesuffix('@%h')}@$$HOSTNAME" in test, name
        elif command[:4] == ["celery", "-A", "config", "beat"]:
            schedule = option(command, "--schedule")
            assert "beat_healthcheck.py" in test and schedule in test, name
            folder = schedule.rsplit("/", 1)[0]
            assert any(volume.endswith(f":{folder}") for volume in service["volumes"]), name
        else:
            pytest.fail(f"{name}: no known health check for {command}")
        depends = service["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["postgres"]["condition"] == depends["redis"]["condition"] == "service_healthy", name
    for name in ("postgres", "redis", "proxy"):
        assert health_test(services[name]), name
    assert "redis-cli ping" in health_test(services["redis"])
    assert "REDISCLI_AUTH" in services["redis"]["environment"]


def test_it_puts_caddy_in_front_of_web_with_certificates_for_the_domain():
    proxy = compose()["services"]["proxy"]
    assert proxy["image"].startswith("caddy:")
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"
    caddyfile = (REPO_ROOT / "deploy" / "Caddyfile").read_text()
    assert "{$SITE_DOMAIN} {" in caddyfile and "reverse_proxy web:8000" in caddyfile
    # Only the proxy is published to the world; web is reached through it.
    assert "ports" not in compose()["services"]["web"]
    assert "SITE_DOMAIN" in env_file_values((REPO_ROOT / ".env.example").read_text())


def test_it_takes_every_deploy_value_from_env_and_redis_asks_for_a_password():
    example = env_file_values((REPO_ROOT / ".env.example").read_text())
    text = (REPO_ROOT / "docker-compose.yml").read_text()
    for name, service in app_services().items():
        assert service["env_file"] == ".env", name
        overridden = set(service.get("environment", {})) & set(example)
        assert not overridden, f"{name} overrides {overridden} from .env"
    # Every value compose interpolates is in the example, unless it has a default.
    for variable, default in re.findall(r"\$\{([A-Z_]+)(:-[^}]*)?", text):
        assert default or variable in example, variable
    redis = compose()["services"]["redis"]
    assert "--requirepass" in redis["command"]
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "REDIS_URL"):
        assert example[name].startswith(f"redis://:{example['REDIS_PASSWORD']}@redis:6379/"), name
    assert f"nirdesha:{example['POSTGRES_PASSWORD']}@postgres:5432" in example["DATABASE_URL"]


def test_env_example_names_every_value_production_requires():
    example = env_file_values((REPO_ROOT / ".env.example").read_text())
    assert required_settings() <= set(example), required_settings() - set(example)


@pytest.mark.slow
def test_production_starts_with_the_env_example_filled_in():
    result = production_check(env_file_values((REPO_ROOT / ".env.example").read_text()))
    assert result.returncode == 0, result.stderr[-3000:]
