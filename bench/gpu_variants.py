"""Where a GPU's encoding time goes: variants of the plain forward pass timed on one set of batches.

The padded floor of bench/full_scale.py (pre-tokenised, length-sorted batches of `--tokens` tokens,
half precision) is timed as it is (on a second pass), with the host's time to issue it and a profile
of its kernels, then with each attention implementation transformers offers for the model, with
other token budgets, with widths rounded up to a multiple of 32 (fewer shapes to build: its first
and second passes, and the embeddings' agreement), with CUDA graphs per shape (`--graphs`) and, last,
under `torch.compile` (`--compile`); the share of padded positions (the most that attention without
padding can save) is printed. It answers, in one short call on a lent GPU, which of these is worth
building into the engine (bench/results/h200-2026-11-27: the forward pass of all-MiniLM-L6-v2 is
bound by the host, and a shape's first pass is 7 times slower than its second).

    python3 bench/gpu_variants.py --items 3000 --languages 4 --json OUT.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bench.full_scale import (  # noqa: E402
    floor_batches,
    padding_share,
    synchronise,
    synthetic_corpus,
    timed_passes,
)
from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model  # noqa: E402
from evaluation.engine.runner import unique_texts  # noqa: E402
from tests.fakes.models import minilm_path  # noqa: E402


def rate(model, batches: list[dict[str, torch.Tensor]], device: str, texts: int) -> float:
    """Texts per second of the model over the batches on a second pass (the first one builds the shapes)."""
    return timed_passes(model, batches, device, texts)[1]


def bucketed(batches: list[dict[str, torch.Tensor]], multiple: int) -> list[dict[str, torch.Tensor]]:
    """The batches with each one's width padded up to a multiple of `multiple` (masked positions).

    Fewer distinct widths mean fewer shapes to build kernels, plans or CUDA graphs for; the padded
    positions are masked, so the embeddings are those of the batches as they were, to rounding.
    """
    padded = []
    for batch in batches:
        width = int(batch["attention_mask"].shape[1])
        extra = -(-width // multiple) * multiple - width
        padded.append({key: torch.nn.functional.pad(value, (0, extra)) for key, value in batch.items()})
    return padded


def min_cosine(model, left: list[dict[str, torch.Tensor]], right: list[dict[str, torch.Tensor]], count: int) -> float:
    """The smallest cosine between the embeddings of the first `count` batches computed two ways."""
    lowest = 1.0
    with torch.inference_mode():
        for one, other in zip(left[:count], right[:count], strict=True):
            a = torch.nn.functional.normalize(model(one)["sentence_embedding"].float(), dim=1)
            b = torch.nn.functional.normalize(model(other)["sentence_embedding"].float(), dim=1)
            lowest = min(lowest, float((a * b).sum(dim=1).min()))
    return lowest


def set_attention(auto_model, implementation: str) -> bool:
    """Switch the transformers model's attention implementation; False when it does not support it."""
    try:
        if hasattr(auto_model, "set_attn_implementation"):
            auto_model.set_attn_implementation(implementation)
        else:
            auto_model.config._attn_implementation = implementation
        return True
    except Exception as error:  # an implementation the architecture or this install lacks
        print(f"  {implementation}: not available ({type(error).__name__}: {str(error)[:120]})")
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--languages", type=int, default=4)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tokens", type=int, default=65_536)
    parser.add_argument("--compile", action="store_true", help="also time the model under torch.compile")
    parser.add_argument(
        "--graphs", action="store_true", help="also time CUDA graphs per shape (torch.compile, reduce-overhead)"
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--quick", action="store_true", help="skip the profile, eager attention and the small budget (a short lease)"
    )
    arguments = parser.parse_args()

    corpus = synthetic_corpus(arguments.items, arguments.languages)
    encoder = SentenceTransformerEncoder.load(resolve_model(str(minilm_path())), device=arguments.device)
    model = encoder.model
    auto_model = model[0].auto_model
    texts = unique_texts(corpus, encoder.prefixed)
    batches = floor_batches(encoder, texts, arguments.tokens)
    report: dict = {
        "device": torch.cuda.get_device_name(0) if arguments.device.startswith("cuda") else "cpu",
        "texts": len(texts),
        "precision": encoder.precision,
        "attention": getattr(auto_model.config, "_attn_implementation", None),
        "padding_share": padding_share(batches),
        "rates": {},
    }
    print(
        f"{len(texts)} texts, {len(batches)} batches, padding {report['padding_share']:.1%}, "
        f"attention {report['attention']}, {encoder.precision}"
    )
    report["rates"]["floor"] = rate(model, batches, arguments.device, len(texts))
    print(f"floor: {report['rates']['floor']:.0f} texts/s", flush=True)
    if arguments.device.startswith("cuda") and not arguments.quick:
        # How long the host takes to issue the floor's work (no waiting on the device) against the whole
        # pass: when the two are close, the forward pass is bound by Python and kernel launches.
        with torch.inference_mode():
            synchronise(arguments.device)
            started = time.perf_counter()
            for batch in batches:
                model(batch)["sentence_embedding"]
            issued = time.perf_counter() - started
            synchronise(arguments.device)
            whole = time.perf_counter() - started
        report["issue_seconds"], report["pass_seconds"] = issued, whole
        tokens = sum(int(batch["attention_mask"].numel()) for batch in batches)
        print(f"host issued the pass in {issued:.2f} s of {whole:.2f} s; {tokens / whole / 1e6:.2f} M padded tokens/s")
        from torch.profiler import ProfilerActivity, profile

        with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
            for batch in batches[: min(20, len(batches))]:
                model(batch)["sentence_embedding"]
            synchronise(arguments.device)
        averages = profiler.key_averages()
        try:
            table = averages.table(sort_by="device_time_total", row_limit=16)
        except Exception:  # an older torch names the column after CUDA
            table = averages.table(sort_by="cuda_time_total", row_limit=16)
        print(table, flush=True)
        report["profile"] = table
    for implementation in () if arguments.quick else ("eager", "sdpa"):
        if set_attention(auto_model, implementation):
            try:
                measured = rate(model, batches, arguments.device, len(texts))
                report["rates"][f"attention={implementation}"] = measured
                print(f"attention={implementation}: {measured:.0f} texts/s", flush=True)
            except Exception as error:
                print(f"  {implementation}: failed ({type(error).__name__}: {str(error)[:160]})")
    set_attention(auto_model, report["attention"] or "sdpa")
    for tokens in (262_144,) if arguments.quick else (16_384, 262_144):
        other = floor_batches(encoder, texts, tokens)
        report["rates"][f"tokens={tokens}"] = rate(model, other, arguments.device, len(texts))
        print(f"tokens={tokens}: {report['rates'][f'tokens={tokens}']:.0f} texts/s", flush=True)
        del other
    for multiple in (32,):
        # Fresh shapes: this variant's first pass builds them, as the engine's first batches do.
        wider = bucketed(batches, multiple)
        first, second = timed_passes(model, wider, arguments.device, len(texts))
        report["rates"][f"widths×{multiple}"] = second
        report[f"widths×{multiple}"] = {
            "first_pass": first,
            "second_pass": second,
            "shapes": len({tuple(batch["input_ids"].shape) for batch in wider}),
            "shapes_before": len({tuple(batch["input_ids"].shape) for batch in batches}),
            "min_cosine": min_cosine(model, batches, wider, 8),
        }
        print(f"widths rounded up to ×{multiple}: {report[f'widths×{multiple}']}", flush=True)
        if arguments.graphs:
            # CUDA graphs per shape (torch.compile's reduce-overhead mode): the host issues one graph per
            # batch instead of every kernel, which is what a host-bound forward pass waits on.
            model[0].auto_model = torch.compile(auto_model, mode="reduce-overhead", dynamic=False)
            started = time.perf_counter()
            first, second = timed_passes(model, wider, arguments.device, len(texts))
            report["rates"][f"graphs, widths×{multiple}"] = second
            report[f"graphs, widths×{multiple}"] = {
                "first_pass_with_compilation": first,
                "second_pass": second,
                "seconds": time.perf_counter() - started,
            }
            print(f"CUDA graphs, widths ×{multiple}: {report[f'graphs, widths×{multiple}']}", flush=True)
            model[0].auto_model = auto_model
        del wider
    if arguments.device.startswith("cuda"):
        # The engine's batches on an accelerator (pooled_batches.py): widths ×32 in batches of 262,144
        # tokens, first and second pass, with the default attention kernels and without cuDNN's (whose
        # plan is built per shape), so the cost of a new shape shows in the first pass.
        from torch.nn.attention import SDPBackend, sdpa_kernel

        engine_like = bucketed(floor_batches(encoder, texts, 262_144), 32)
        shapes = len({tuple(batch["input_ids"].shape) for batch in engine_like})
        for label, backends in (
            ("sdpa default", None),
            ("sdpa without cuDNN", [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]),
        ):
            context = sdpa_kernel(backends) if backends else contextlib.nullcontext()
            with context:
                first, second = timed_passes(model, engine_like, arguments.device, len(texts))
            key = f"{label}, 262144 tokens, widths×32"
            report["rates"][key] = second
            report[key] = {"first_pass": first, "second_pass": second, "shapes": shapes, "batches": len(engine_like)}
            print(f"{key}: {report[key]}", flush=True)
        del engine_like
    for label, value in report["rates"].items():
        print(f"{label:>28}: {value:9.0f} texts/s  ({value / report['rates']['floor']:.2f}× the floor)", flush=True)
    if arguments.json:
        arguments.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if arguments.compile:
        model[0].auto_model = torch.compile(auto_model, dynamic=True)
        started = time.perf_counter()
        report["rates"]["compiled"] = rate(model, batches, arguments.device, len(texts))
        print(
            f"{'compiled':>28}: {report['rates']['compiled']:9.0f} texts/s "
            f"({report['rates']['compiled'] / report['rates']['floor']:.2f}× the floor; "
            f"{time.perf_counter() - started:.0f} s with compilation)"
        )
        if arguments.json:
            arguments.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
