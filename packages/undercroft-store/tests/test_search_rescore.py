"""The rescore tier's reorder on its own: the window, ties, vanished content, demotion, and every failure arm."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_core.model_roles import DegradingCrossEncoder
from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.rescore import CrossEncoderRescore

TEXTS = {0: "alpha", 1: "bravo", 2: "charlie", 3: "delta", 4: "echo"}
#: What the fake model scores each passage.
SCORES = {"alpha": 0.1, "bravo": 0.9, "charlie": 0.5, "delta": 0.9, "echo": 5.0}


class Fake(DegradingCrossEncoder):
    def __init__(self, *, broken: set[str] | None = None, raise_all: bool = False) -> None:
        super().__init__("fake")
        self.broken = broken or set()
        self.raise_all = raise_all
        self.calls: list[list[str]] = []

    def _score_batch(self, query: str, passages: list[str]) -> NDArray[np.floating]:
        self.calls.append(passages)
        if self.raise_all or self.broken & set(passages):
            raise RuntimeError("inference failed")
        return np.asarray([SCORES[p] for p in passages], dtype=np.float32)


def _contents(window: Sequence[int]) -> list[str | None]:
    return [TEXTS.get(position) for position in window]


def test_the_window_is_reordered_by_score_and_the_tail_keeps_its_place() -> None:
    fake = Fake()
    stage = CrossEncoderRescore(fake, top_n=4)
    # echo (5.0) is below the window: it stays last whatever it would score; bravo/delta tie and keep fused order.
    assert stage.reorder("q", [0, 1, 2, 3, 4], _contents) == [1, 3, 2, 0, 4]
    assert fake.calls == [["alpha", "bravo", "charlie", "delta"]]  # one batched call for the window
    assert stage.kept_fused == 0 and fake.rerank_failures == 0


def test_demoted_positions_stay_below_the_promoted_ones() -> None:
    stage = CrossEncoderRescore(Fake(), top_n=5)
    assert stage.reorder("q", [0, 1, 2, 3, 4], _contents, demoted=lambda p: p == 4) == [1, 3, 2, 0, 4]


def test_a_vanished_drawer_sinks_within_the_window_and_is_not_scored() -> None:
    fake = Fake()
    stage = CrossEncoderRescore(fake, top_n=3)
    assert stage.reorder("q", [9, 0, 2], _contents) == [2, 0, 9]
    assert fake.calls == [["alpha", "charlie"]]


@pytest.mark.parametrize("fake", [Fake(broken={"charlie"}), Fake(raise_all=True)], ids=["one-pair", "every-pair"])
def test_a_failure_keeps_the_fused_order_and_is_counted(fake: Fake) -> None:
    stage = CrossEncoderRescore(fake, top_n=5)
    assert stage.reorder("q", [0, 1, 2, 3, 4], _contents) == [0, 1, 2, 3, 4]
    assert fake.rerank_failures >= 1 and stage.kept_fused == 1


def test_a_role_that_raises_despite_its_contract_costs_no_result() -> None:
    class Raising(Fake):
        def score(self, query: str, passages: Sequence[str]) -> NDArray[np.float32]:
            raise MemoryError("out of memory inside the runtime")

    stage = CrossEncoderRescore(Raising(), top_n=5)
    assert stage.reorder("q", [3, 1, 0], _contents) == [3, 1, 0] and stage.kept_fused == 1


@pytest.mark.parametrize("depth", [0, -1, True, 2.5])
def test_a_bad_depth_refuses(depth: object) -> None:
    with pytest.raises(InvalidSearch, match="rerank depth"):
        CrossEncoderRescore(Fake(), top_n=depth)  # type: ignore[arg-type]
