"""Checks a submitted model before any weights are loaded: where it is, what it is, whether we may run it.

The same checks serve the submit form (quick, from the Hub's metadata) and the pre-flight worker
(thorough: configs and tokenizer files downloaded, safetensors headers read, tokenizer coverage
measured). Nothing here imports Django or executes code shipped with a model: configs are read as
JSON and tokenizers are loaded with ``trust_remote_code=False``. The Hub is reached only through
evaluation.engine.hub, which words its faults.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from pathlib import Path

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from evaluation.engine import hub
from evaluation.engine.errors import ModelLoadError, ModelNotFoundError, ModelRejected, SubmitterError
from evaluation.model_facts import facts_from_files

WEIGHTS_SUFFIX = ".safetensors"
PICKLE_WEIGHTS = ("pytorch_model.bin", "model.ckpt", "tf_model.h5", "flax_model.msgpack")
# Code files that transformers would import with trust_remote_code=True.
CODE_PREFIXES = ("modeling_", "configuration_", "tokenization_", "processing_", "image_processing_", "feature_")


class InvalidModelReference(SubmitterError):
    """The model field is neither a well-formed Hub id nor an absolute folder path."""


@dataclass
class ModelCheck:
    """What the checks found out about one model at one exact revision."""

    name: str
    is_local: bool
    commit: str
    files: dict[str, int] = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    parameter_count: int | None = None
    license: str = ""
    # Whether the pinned commit may stand for the model on the board (a tag or the main branch's
    # history, evaluation.engine.hub.is_on_main_history); a pull request or another branch may not.
    on_main_history: bool = True

    @property
    def weight_files(self) -> list[str]:
        return sorted(name for name in self.files if name.endswith(WEIGHTS_SUFFIX))

    @property
    def weight_bytes(self) -> int:
        return sum(self.files[name] for name in self.weight_files)

    def summary(self) -> dict:
        """A JSON-safe record for run.details."""
        return {
            "commit": self.commit,
            "weight_files": self.weight_files,
            "weight_bytes": self.weight_bytes,
            "parameter_count": self.parameter_count,
            "license": self.license,
        }


def is_local_reference(name: str) -> bool:
    return name.startswith("/")


def validate_reference(name: str) -> str:
    """Return the cleaned model reference, or raise InvalidModelReference with a readable reason."""
    name = name.strip()
    if not name:
        raise InvalidModelReference("Give a Hugging Face model id such as 'intfloat/multilingual-e5-small'.")
    if is_local_reference(name):
        if ".." in Path(name).parts:
            raise InvalidModelReference("A local model folder must be an absolute path without '..'.")
        return name.rstrip("/") or "/"
    if name.startswith(("http://", "https://")):
        raise InvalidModelReference("Give the model id (owner/name), not a URL.")
    try:
        validate_repo_id(name)
    except HFValidationError as exc:
        raise InvalidModelReference(f"'{name}' is not a valid Hugging Face model id: {_first_line(exc)}") from None
    if name.count("/") != 1:
        raise InvalidModelReference(f"'{name}' is not a valid Hugging Face model id: use the form owner/name.")
    return name


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# Local folders -------------------------------------------------------------------------------


# A model folder holds a few dozen files; walking far more than this means it is not one (e.g. "/").
MAX_LOCAL_FILES = 5000


def local_files(folder: Path) -> dict[str, int]:
    """Relative path → size of every regular file in a model folder, hidden folders (.git, .cache) left out."""
    paths: list[Path] = []
    for path in folder.rglob("*"):
        paths.append(path)
        if len(paths) > MAX_LOCAL_FILES:
            raise ModelNotFoundError(f"{folder} holds more than {MAX_LOCAL_FILES} files; it is not a model folder.")
    files: dict[str, int] = {}
    for path in sorted(paths):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        files[relative.as_posix()] = path.stat().st_size
    return files


def read_json(path: Path) -> dict | list | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"{path.name} is not valid JSON: {_first_line(exc)}") from None


def read_safetensors_header(path: Path) -> dict:
    """Parse a safetensors header without loading tensors; raise ModelLoadError when it is not one."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise ModelLoadError(f"{path.name} is not a safetensors file (it is only {size} bytes).")
        (header_size,) = struct.unpack("<Q", prefix)
        if header_size > min(size - 8, 100 * 1024 * 1024):
            raise ModelLoadError(f"{path.name} is not a valid safetensors file (its header length is impossible).")
        raw = handle.read(header_size)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ModelLoadError(f"{path.name} is not a valid safetensors file (its header is not JSON).") from None
    if not isinstance(header, dict):
        raise ModelLoadError(f"{path.name} is not a valid safetensors file (its header is not an object).")
    data_size = size - 8 - header_size
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and 0 <= offsets[0] <= offsets[1] <= data_size):
            raise ModelLoadError(f"{path.name} is damaged: tensor {name!r} points outside the file.")
    return header


def parameter_count(header: Mapping) -> int:
    return sum(prod(entry["shape"]) for name, entry in header.items() if name != "__metadata__")


def remote_code_reason(config: Mapping | None, filenames: Sequence[str], modules: Sequence | None = None) -> str | None:
    """Why loading this model would execute code it ships, or None when it would not."""
    if config and config.get("auto_map"):
        return "its config.json has an auto_map, so loading it would run code from the repository"
    code_files = [
        name
        for name in filenames
        if name.endswith(".py") and Path(name).name.startswith((*CODE_PREFIXES, "custom_", "modules_"))
    ]
    if code_files:
        return f"it ships custom code ({', '.join(sorted(code_files)[:3])})"
    for module in modules or []:
        module_type = module.get("type", "") if isinstance(module, dict) else ""
        if module_type and not module_type.startswith("sentence_transformers."):
            return f"its modules.json uses the custom module {module_type!r}"
    return None


def inspect_local_folder(name: str) -> ModelCheck:
    """Check a model folder on this machine's disk: configs, code, safetensors headers, fingerprint."""
    folder = Path(name)
    if not folder.is_dir():
        raise ModelNotFoundError(f"There is no model folder at {name}: the path does not exist on this machine.")
    # Checked before any walk of the folder, so that "/" or a home folder is refused at once.
    if not ((folder / "config.json").is_file() or (folder / "modules.json").is_file()):
        raise ModelLoadError(
            f"There is no config.json or modules.json in {name}, so this is not a transformers model folder."
        )
    files = local_files(folder)
    config = read_json(folder / "config.json") or {}
    modules = read_json(folder / "modules.json")
    check = ModelCheck(name=name, is_local=True, commit="", files=files, config=config)
    enforce_loadable(check, modules=modules)
    check.parameter_count = sum(parameter_count(read_safetensors_header(folder / f)) for f in check.weight_files)
    check.commit = local_revision(name)
    return check


def local_revision(name: str) -> str:
    """The revision of a local folder exactly as the engine pins it (a hash of its files).

    The engine records its own pin on the run and refuses a second live run of it, so the
    submission's duplicate check must use the very same value.
    """
    # The engine's encoders module imports torch; only staff submissions of local folders need it.
    from evaluation.engine.encoders import resolve_model

    return resolve_model(name).commit


def enforce_loadable(check: ModelCheck, *, modules: Sequence | None = None) -> None:
    """Refuse what we must not or cannot load: shipped code, no configuration, no safetensors weights."""
    reason = remote_code_reason(check.config, list(check.files), modules)
    if reason:
        raise ModelRejected(f"This model needs remote code ({reason}); the leaderboard only runs models without it.")
    if "config.json" not in check.files and "modules.json" not in check.files:
        raise ModelLoadError("There is no config.json or modules.json, so this is not a transformers model.")
    if not check.weight_files:
        pickles = [name for name in check.files if Path(name).name in PICKLE_WEIGHTS]
        hint = f" (found only {', '.join(sorted(pickles)[:2])}; convert them to safetensors)" if pickles else ""
        raise ModelRejected(f"There are no safetensors weights{hint}; we only load .safetensors files.")


def enforce_size(check: ModelCheck, *, max_bytes: int) -> None:
    if check.weight_bytes > max_bytes:
        raise ModelRejected(
            f"The weights take {_gigabytes(check.weight_bytes)}, over this site's limit of {_gigabytes(max_bytes)}."
        )


def _gigabytes(size: int) -> str:
    return f"{size / 1024**3:.2f} GiB" if size >= 1024**3 else f"{size / 1024**2:.1f} MiB"


# The Hugging Face Hub -------------------------------------------------------------------------


def check_hub_model(
    repo_id: str, revision: str | None, *, endpoint: str | None = None, timeout: float | None = None
) -> ModelCheck:
    """Resolve a Hub model's revision to a commit and check its files from the Hub's metadata alone."""
    found = hub.inspect(repo_id, revision, endpoint=endpoint, timeout=timeout)
    check = ModelCheck(
        name=found.name,
        is_local=False,
        commit=found.commit,
        files=found.files,
        config=found.config,
        parameter_count=found.parameter_count,
        license=found.license,
    )
    enforce_loadable(check)
    return check


def check_support_files(folder: Path, check: ModelCheck) -> None:
    """Re-check what the downloaded configs say (the Hub's summary of config.json may be partial)."""
    config = read_json(folder / "config.json") or {}
    modules = read_json(folder / "modules.json")
    check.config = config or check.config
    enforce_loadable(check, modules=modules)


# Tokenizer coverage ---------------------------------------------------------------------------


def load_tokenizer(folder: Path):
    """Load the tokenizer saved in a model folder without running any code the folder ships."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False)
    # transformers raises many exception types for a broken tokenizer; all mean the same to a submitter.
    except Exception as exc:
        raise ModelLoadError(f"The tokenizer does not load: {_first_line(exc)}") from None


def tokenizer_coverage(
    encode: Callable[[str], Sequence[int]], unknown_id: int | None, samples: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, float | int]]:
    """Tokens per word and unknown-token rate on a few sentences per group (per script, as the worker calls it).

    Many tokens per word means the script is split into bytes or characters (slow, long sequences);
    a high unknown rate means the vocabulary cannot represent the script at all. The keys match
    what the engine records from all texts at the end of a run, so pages read either.
    """
    coverage: dict[str, dict[str, float | int]] = {}
    for group, sentences in samples.items():
        words = tokens = unknown = 0
        for sentence in sentences:
            ids = list(encode(sentence))
            words += len(sentence.split())
            tokens += len(ids)
            if unknown_id is not None:
                unknown += sum(1 for token in ids if token == unknown_id)
        if not words:
            continue
        coverage[group] = {
            "texts": len(sentences),
            "words": words,
            "tokens": tokens,
            "tokens_per_word": round(tokens / words, 3),
            "unk_rate": round(unknown / tokens, 4) if tokens else 0.0,
        }
    return coverage


class UnreadableText(ModelRejected):
    """The tokenizer turns too much of a language's sample into unknown tokens: the model cannot read it.

    Carries the measured coverage, so that the run page shows the figures the refusal is based on."""

    def __init__(self, message: str, coverage: Mapping[str, Mapping[str, float | int]]) -> None:
        super().__init__(message)
        self.coverage = dict(coverage)


def enforce_readable(
    by_language: Mapping[str, Mapping[str, float | int]],
    *,
    max_unknown_rate: float,
    names: Mapping[str, str],
    coverage: Mapping[str, Mapping[str, float | int]],
) -> None:
    """Refuse a model whose tokenizer maps more than `max_unknown_rate` of any language's sample to unknown tokens.

    `by_language` is tokenizer_coverage() per language code; `coverage` (per script) is what the run page shows.
    """
    over = [
        (code, figures)
        for code, figures in by_language.items()
        if figures.get("tokens") and float(figures["unk_rate"]) > max_unknown_rate
    ]
    if not over:
        return
    over.sort(key=lambda pair: (-float(pair[1]["unk_rate"]), pair[0]))
    described = [
        f"{names.get(code, code)} {100 * float(figures['unk_rate']):.1f}% "
        f"({round(float(figures['unk_rate']) * int(figures['tokens']))} of {figures['tokens']} tokens, "
        f"{figures['texts']} texts)"
        for code, figures in over
    ]
    raise UnreadableText(
        f"The tokenizer maps more than this site's limit of {100 * max_unknown_rate:.0f}% of a language's sample "
        f"to unknown tokens, so the model cannot read it: {'; '.join(described)}.",
        coverage,
    )


# Model facts -----------------------------------------------------------------------------------


def read_model_facts(folder: Path, check: ModelCheck) -> dict:
    """The facts columns for a checked model, read from its config, tokenizer and sentence-transformers files."""
    modules = read_json(folder / "modules.json")
    module_paths = [m.get("path", "") for m in modules if isinstance(m, dict)] if isinstance(modules, list) else []
    pooling = next(
        (read_json(folder / path / "config.json") for path in module_paths if path and "Pooling" in path), None
    )
    dense_layers = [
        layer
        for path in module_paths
        if path and "Dense" in path
        for layer in [read_json(folder / path / "config.json")]
        if isinstance(layer, dict)
    ]
    return facts_from_files(
        check.name,
        is_local=check.is_local,
        config=check.config or {},
        tokenizer_config=_as_dict(read_json(folder / "tokenizer_config.json")),
        sentence_config=_as_dict(read_json(folder / "sentence_bert_config.json")),
        pooling=_as_dict(pooling),
        dense_layers=dense_layers,
        parameter_count=check.parameter_count,
        license=check.license,
    )


def _as_dict(value: object) -> dict | None:
    return value if isinstance(value, dict) else None
