"""Question-for-question comparison of two `undercroft-bench locomo --json` reports (issue 24).

    python benchmarks/compare_locomo.py BASELINE.json CANDIDATE.json [more candidates...]

For each candidate: session and turn R@k per category beside the baseline, and how many questions each unit
gains (baseline missed, candidate hit) and loses (baseline hit, candidate missed). Both reports must hold the
same questions (same file, split and chunking), which is checked.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def _load(path: str) -> dict[tuple[str, int], dict[str, object]]:
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    return {(str(q["conversation_id"]), int(q["index"])): q for q in report["questions"]}


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100.0 * hits / total:.2f} %)" if total else "—"


def compare(baseline_path: str, candidate_path: str) -> list[str]:
    """The comparison lines of one candidate against the baseline."""
    baseline, candidate = _load(baseline_path), _load(candidate_path)
    if baseline.keys() != candidate.keys():
        raise SystemExit(f"{candidate_path}: not the same questions as {baseline_path}")
    evaluable = [key for key, q in baseline.items() if q["session_hit"] is not None]
    lines = [f"{Path(candidate_path).name} vs {Path(baseline_path).name}"]
    for unit in ("session_hit", "turn_hit"):
        scored = [key for key in evaluable if baseline[key][unit] is not None and candidate[key][unit] is not None]
        gains = [key for key in scored if candidate[key][unit] and not baseline[key][unit]]
        losses = [key for key in scored if baseline[key][unit] and not candidate[key][unit]]
        base_hits = sum(1 for key in scored if baseline[key][unit])
        cand_hits = sum(1 for key in scored if candidate[key][unit])
        lines.append(
            f"  {unit.split('_')[0]}: {_rate(base_hits, len(scored))} -> {_rate(cand_hits, len(scored))}; "
            f"gains {len(gains)}, losses {len(losses)}, net {len(gains) - len(losses):+d}"
        )
        categories = sorted({int(str(baseline[key]["category"])) for key in scored})
        base_by = Counter(int(str(baseline[k]["category"])) for k in scored if baseline[k][unit])
        cand_by = Counter(int(str(candidate[k]["category"])) for k in scored if candidate[k][unit])
        size_by = Counter(int(str(baseline[k]["category"])) for k in scored)
        gain_by = Counter(int(str(baseline[k]["category"])) for k in gains)
        loss_by = Counter(int(str(baseline[k]["category"])) for k in losses)
        for category in categories:
            lines.append(
                f"    category {category}: {_rate(base_by[category], size_by[category])} -> "
                f"{_rate(cand_by[category], size_by[category])} (+{gain_by[category]} / -{loss_by[category]})"
            )
    return lines


def main(argv: list[str]) -> int:
    """Print every candidate's comparison against the first report."""
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    for candidate in argv[1:]:
        print("\n".join(compare(argv[0], candidate)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
