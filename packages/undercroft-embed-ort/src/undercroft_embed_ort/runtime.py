"""The tuned runtime: execution providers, the session pool, and dynamic int8 quantisation.

``UNDERCROFT_ORT_POOL`` sessions, each single-threaded, take independent batches side by side (onnxruntime
releases the GIL inside ``run``); a pool of 1 is one session using every core for one batched forward —
the few-core posture. A GPU provider is used when onnxruntime reports one (then the pool is one device
session); nothing requires a GPU.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import onnxruntime
from undercroft_embed_onnx.text_model import open_session

from undercroft_embed_ort.errors import ModelUnavailable

__all__ = [
    "GPU_PROVIDERS",
    "POOL_VARIABLE",
    "SessionPool",
    "pool_size",
    "quantise_dynamic",
    "select_providers",
]

POOL_VARIABLE = "UNDERCROFT_ORT_POOL"
#: Execution providers preferred, in order, when onnxruntime reports them; the CPU provider always follows.
GPU_PROVIDERS: tuple[str, ...] = (
    "CUDAExecutionProvider",
    "ROCMExecutionProvider",
    "DmlExecutionProvider",
    "CoreMLExecutionProvider",
)

T = TypeVar("T")


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def pool_size(env: Mapping[str, str] | None = None) -> int:
    """``UNDERCROFT_ORT_POOL`` in 1..=1024; unset or unreadable is the number of usable cores (it warns at start)."""
    raw = (os.environ if env is None else env).get(POOL_VARIABLE, "").strip()
    if raw.isdigit() and 1 <= int(raw) <= 1024:
        return int(raw)
    return _cores()


def select_providers(available: Sequence[str] | None = None) -> list[str]:
    """The GPU provider onnxruntime reports first (if any), then the CPU provider."""
    reported = onnxruntime.get_available_providers() if available is None else list(available)
    gpu = [provider for provider in GPU_PROVIDERS if provider in reported]
    return [*gpu[:1], "CPUExecutionProvider"]


class SessionPool:
    """``size`` sessions over one model file; :meth:`map` runs one job per item, each on a free session."""

    def __init__(self, model: Path, variable: str, size: int, providers: Sequence[str] | None = None) -> None:
        self.providers = select_providers() if providers is None else list(providers)
        on_device = self.providers[0] != "CPUExecutionProvider"
        self.size = 1 if on_device else max(1, size)
        self.sessions = [open_session(model, variable, self._options(), self.providers) for _ in range(self.size)]
        self._free: queue.SimpleQueue[onnxruntime.InferenceSession] = queue.SimpleQueue()
        for session in self.sessions:
            self._free.put(session)
        self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="ort") if self.size > 1 else None

    def _options(self) -> onnxruntime.SessionOptions:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 4  # failures are counted by the role, not logged twice
        if self.size > 1:
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
        else:
            # Spinning worker threads starve on a shared, few-core box (measured: a 32 x 200-token MiniLM
            # batch took 4.2 s spinning vs 2.4 s not, at load 7 on 2 cores); they yield instead.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    def _run(self, job: Callable[[onnxruntime.InferenceSession, T], object], item: T) -> object:
        session = self._free.get()
        try:
            return job(session, item)
        finally:
            self._free.put(session)

    def map(self, job: Callable[[onnxruntime.InferenceSession, T], object], items: Sequence[T]) -> list[object]:
        """``job(session, item)`` for every item, fanned across the pool; the first exception propagates."""
        if self._executor is None or len(items) < 2:
            return [self._run(job, item) for item in items]
        return list(self._executor.map(lambda item: self._run(job, item), items))

    def close(self) -> None:
        """Stop the worker threads (sessions are freed with the object)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)


def quantise_dynamic(source: Path | str, destination: Path | str) -> Path:
    """Write a dynamic int8 (QInt8 weights) copy of ``source`` to ``destination``: smaller, CPU-friendlier.

    An offline, one-time step (it needs the ``onnx`` package, which the runtime path does not): point
    ``UNDERCROFT_ONNX_MODEL`` at the result. The identity changes with the bytes unless a name is declared.
    """
    source_path, destination_path = Path(source), Path(destination)
    if not source_path.is_file():
        raise ModelUnavailable(f"{source_path}: no such model file")
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as error:
        raise ModelUnavailable(f"int8 quantisation needs the onnx package ({error})") from None
    quantize_dynamic(str(source_path), str(destination_path), weight_type=QuantType.QInt8)
    return destination_path
