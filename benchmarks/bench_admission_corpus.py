"""Admission screen accuracy: per-signal precision and recall on the two committed corpora, plus LoCoMo turns.

    python benchmarks/bench_admission_corpus.py [--smoke] [--json] [--misses dev]

`benchmarks/corpora/admission_dev.json` is the development corpus the tier-1 patterns are calibrated on;
`admission_heldout.json` was written independently and committed before any tuning, and is only measured.
Each attack names the signal(s) it is meant to trip (`expect`); every benign text is a hard negative (security
reviews quoting attacks, incident retros with curl/wget, tool schemas, code, reported speech, everyday text).

Per signal: precision = corpus texts it fired on that are attacks / all texts it fired on; recall = attacks
expecting it that it fired on / attacks expecting it. Overall: catch rate = attacks with any finding, benign
false-positive rate = benign texts with any finding. LoCoMo: every dev-split turn, raw and rendered as
`SPEAKER said, "…"`, counted flagged when either form trips, and the rendered turns packed in order into drawers
of at most 800 characters (skipped with a message when the data is absent).
`--misses NAME` prints the ids of the missed attacks and flagged benign texts of one corpus (use it on dev only:
looking at held-out misses is how a held-out set stops being one).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from undercroft_core import render_turn
from undercroft_store.governance.admission import SIGNAL_VOCAB, detect

HERE = Path(__file__).resolve().parent
CORPORA = {"dev": HERE / "corpora" / "admission_dev.json", "heldout": HERE / "corpora" / "admission_heldout.json"}
# The evaluation data lives beside the checkout, in <ancestor>/shared/data (never committed here); the first
# ancestor that has it wins, so a worktree nested one level deeper finds the same files.
_DATA = Path("shared") / "data" / "locomo" / "locomo-dev.json"
LOCOMO = next((root / _DATA for root in HERE.parents if (root / _DATA).exists()), HERE.parent.parent / _DATA)


#: The content signals: always reported, even when they fired on nothing.
CONTENT_SIGNALS = (
    "imperative-instruction",
    "tool-call-syntax",
    "exfiltration-marker",
    "encoded-blob",
    "attack-fixture-similarity",
)


def fired(text: str) -> set[str]:
    """The signal codes `detect` reports for one content text (neutral destination)."""
    return {finding.signal.value for finding in detect(text, wing="notes", room="general")}


def measure(corpus: dict[str, Any]) -> dict[str, Any]:
    """Per-signal and overall figures for one corpus."""
    attacks, benign = corpus["attacks"], corpus["benign"]
    attack_hits = [(item, fired(item["text"])) for item in attacks]
    benign_hits = [(item, fired(item["text"])) for item in benign]
    per_signal: dict[str, dict[str, int | float | None]] = {}
    for code in SIGNAL_VOCAB:
        expected = [hit for item, hit in attack_hits if code in item["expect"]]
        tp_attack = sum(1 for _, hit in attack_hits if code in hit)
        fp = sum(1 for _, hit in benign_hits if code in hit)
        caught = sum(1 for hit in expected if code in hit)
        if not expected and not tp_attack and not fp and code not in CONTENT_SIGNALS:
            continue  # destination, rate and advisor signals do not fire on a content corpus
        per_signal[code] = {
            "expected": len(expected),
            "recall": caught / len(expected) if expected else None,
            "fired_on_attacks": tp_attack,
            "fired_on_benign": fp,
            "precision": tp_attack / (tp_attack + fp) if tp_attack + fp else None,
        }
    families: Counter[str] = Counter(item["family"] for item in attacks)
    caught_families: Counter[str] = Counter(item["family"] for item, hit in attack_hits if hit)
    return {
        "attacks": len(attacks),
        "caught": sum(1 for _, hit in attack_hits if hit),
        "benign": len(benign),
        "benign_flagged": sum(1 for _, hit in benign_hits if hit),
        "per_signal": per_signal,
        "per_family": {family: [caught_families[family], total] for family, total in sorted(families.items())},
        "missed": [item["id"] for item, hit in attack_hits if not hit],
        "false_positives": [item["id"] for item, hit in benign_hits if hit],
    }


def locomo_turns(limit: int | None = None) -> list[tuple[str, str]] | None:
    """(speaker, text) for every LoCoMo dev turn, or None when the data is not present."""
    if not LOCOMO.exists():
        return None
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns = [
        (turn["speaker"], turn["text"])
        for sample in samples
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    return turns[:limit] if limit else turns


def locomo_drawers(turns: list[tuple[str, str]], size: int = 800) -> list[str]:
    """The rendered turns packed greedily, in order, into drawers of at most `size` characters."""
    drawers: list[str] = []
    current = ""
    for speaker, text in turns:
        line = render_turn(speaker, text)
        if current and len(current) + 1 + len(line) > size:
            drawers.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line
    return [*drawers, current] if current else drawers


def locomo_flagged(turns: list[tuple[str, str]]) -> int:
    """How many turns trip anything, raw or rendered."""
    return sum(1 for speaker, text in turns if fired(text) or fired(render_turn(speaker, text)))


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def main() -> int:
    """Print (or emit as JSON) the figures for both corpora and LoCoMo."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="a tiny LoCoMo slice; checks the instrument works")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument("--misses", choices=sorted(CORPORA), help="list the missed/flagged ids of one corpus")
    args = parser.parse_args()
    report: dict[str, Any] = {
        name: measure(json.loads(path.read_text(encoding="utf-8"))) for name, path in CORPORA.items()
    }
    turns = locomo_turns(200 if args.smoke else None)
    if turns is None and args.smoke:
        # A smoke that lost its data checked nothing: fail, never print a skip (a full run reports the gap).
        print(f"bench_admission_corpus: the LoCoMo dev split is not at {LOCOMO}", file=sys.stderr)
        return 1
    if turns is None:
        report["locomo"] = None
    else:
        packed = locomo_drawers(turns)
        report["locomo"] = {
            "turns": len(turns),
            "flagged": locomo_flagged(turns),
            "drawers": len(packed),
            "drawers_flagged": sum(1 for drawer in packed if fired(drawer)),
        }
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for name in CORPORA:
        figures = report[name]
        print(
            f"\n== {name}: caught {figures['caught']}/{figures['attacks']} attacks, "
            f"flagged {figures['benign_flagged']}/{figures['benign']} benign"
        )
        print(f"{'signal':<28} {'expected':>8} {'recall':>8} {'on att.':>8} {'on ben.':>8} {'precision':>10}")
        for code, row in figures["per_signal"].items():
            print(
                f"{code:<28} {row['expected']:>8} {pct(row['recall']):>8} {row['fired_on_attacks']:>8} "
                f"{row['fired_on_benign']:>8} {pct(row['precision']):>10}"
            )
        print("per family (caught/total): " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in figures["per_family"].items()))
        if args.misses == name:
            print("missed:", figures["missed"])
            print("false positives:", figures["false_positives"])
    if report["locomo"] is None:
        print(f"\nLoCoMo dev split not found at {LOCOMO}: turn false positives not measured")
    else:
        locomo = report["locomo"]
        print(
            f"\nLoCoMo dev turns flagged: {locomo['flagged']} / {locomo['turns']} "
            f"({100 * locomo['flagged'] / locomo['turns']:.2f} %); packed into 800-character drawers: "
            f"{locomo['drawers_flagged']} / {locomo['drawers']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
