"""A tokenizer without model_max_length never lets a long text index past the position embeddings.

On a GPU such an index is a device-side assert that breaks the worker process for good; on the CPU it
is an IndexError, which is what this test catches without a GPU. RoBERTa-style models (XLM-R, the
multilingual E5 family) number their positions after the padding index, so a table of p rows holds
p − pad − 1 usable positions: sentence-transformers' own limit (p) is two too many.
"""

import warnings

import numpy as np
import torch

from evaluation.engine.encoders import DEFAULT_MAX_TOKENS, SentenceTransformerEncoder, resolve_model, sequence_cap
from tests.fakes.models import SPECIAL_TOKENS, WORDS


def roberta_without_a_length_limit(folder):
    """A tiny RoBERTa sentence encoder (18 position rows, padding id 0) whose tokenizer states no limit."""
    from sentence_transformers import SentenceTransformer
    from transformers import BertTokenizer, RobertaConfig, RobertaModel

    source = folder.parent / f".{folder.name}-source"
    source.mkdir(parents=True)
    tokens = SPECIAL_TOKENS + WORDS
    BertTokenizer(vocab={token: number for number, token in enumerate(tokens)}, do_lower_case=True).save_pretrained(
        source
    )
    config = RobertaConfig(
        vocab_size=len(tokens),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=18,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    RobertaModel(config).save_pretrained(source, safe_serialization=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from sentence_transformers.models import Pooling, Transformer

        model = SentenceTransformer(modules=[Transformer(str(source)), Pooling(16)], device="cpu")
    model.save(str(folder))
    return folder


def test_a_long_text_is_truncated_to_the_usable_positions(tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = roberta_without_a_length_limit(tmp_path / "roberta")
    long_text = "please write " * 60
    # sentence-transformers alone takes the table's size as the limit and indexes past it.
    plain = SentenceTransformer(str(folder), device="cpu")
    assert plain.max_seq_length == 18
    try:
        plain.encode([long_text])
        raise AssertionError("the uncapped model was expected to index past its position table")
    except IndexError:
        pass

    encoder = SentenceTransformerEncoder.load(resolve_model(str(folder)), device="cpu")
    assert encoder.model.max_seq_length == 18 - 0 - 1
    vectors = encoder.encode([long_text, "a"])
    assert vectors.shape == (2, 16) and np.isfinite(vectors).all()


def test_the_cap_keeps_a_stated_limit_that_fits_and_has_a_default_when_none_is_stated():
    bert = {"positions": 512, "model_type": "bert", "pad_token_id": 0}
    xlmr = {"positions": 514, "model_type": "xlm-roberta", "pad_token_id": 1}
    assert sequence_cap(256, 512, **bert) == 256  # all-MiniLM-L6-v2: unchanged
    assert sequence_cap(None, 10**30, **bert) == 512
    assert sequence_cap(514, 10**30, **xlmr) == 512
    assert sequence_cap(None, 10**30, positions=None, model_type="bert", pad_token_id=None) is None
    assert sequence_cap(None, 10**30, positions=8192, model_type="bert", pad_token_id=0) == DEFAULT_MAX_TOKENS
    assert sequence_cap(1024, None, positions=8192, model_type="bert", pad_token_id=0) == 1024
