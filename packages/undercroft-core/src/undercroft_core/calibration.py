"""The semantic admission gate and the semantic floor, measured from committed known-unrelated probe pairs.

Fourteen pairs, half same-language on purpose (a cross-lingual-only set under-estimates the floor). The
gate is the worst (highest) probe cosine plus a 0.06 margin; a probe that embeds to zero is an inference
failure, not a floor, and the measurement refuses (None). The floor is the mean probe cosine, clamped to
[0, 0.98]. Both are resolved once per open, never per hit.
"""

from __future__ import annotations

import numpy as np

from undercroft_core.embedder import Embedder

__all__ = [
    "GATE_MARGIN",
    "PROBE_PAIRS",
    "measure_admission_gate",
    "measure_semantic_floor",
    "probe_cosines",
]

#: Added to the worst unrelated probe cosine to give the gate.
GATE_MARGIN = 0.06

#: (language, text, language, text): pairs that share no meaning. Seven same-language, seven cross-language.
PROBE_PAIRS: tuple[tuple[str, str, str, str], ...] = (
    (
        "en",
        "The invoice for the roof repair is due on Friday.",
        "en",
        "My cat sleeps on the warm windowsill all afternoon.",
    ),
    (
        "en",
        "We migrated the database to a new cluster last night.",
        "en",
        "She planted tomatoes and basil in the garden.",
    ),
    (
        "de",
        "Der Zug nach Berlin hat heute zwanzig Minuten Verspätung.",
        "de",
        "Meine Großmutter backt jeden Sonntag einen Apfelkuchen.",
    ),
    (
        "fr",
        "Le médecin a prescrit des antibiotiques pour une semaine.",
        "fr",
        "Nous avons repeint la cuisine en bleu clair.",
    ),
    ("es", "El equipo ganó el campeonato después de diez años.", "es", "La factura de la luz llegó más alta este mes."),
    ("ru", "Завтра мы идём в театр на новую постановку.", "ru", "Сервер перезагрузился после обновления ядра."),
    ("it", "Il volo per Roma è stato cancellato per la nebbia.", "it", "Ho comprato un nuovo paio di scarpe da corsa."),
    ("en", "The quarterly budget review moved to Thursday.", "de", "Der Hund schläft unter dem Küchentisch."),
    ("en", "Please rotate the API keys before the audit.", "ar", "ذهبت العائلة إلى البحر في عطلة الصيف."),
    ("fr", "Le concert commence à vingt heures précises.", "ja", "祖母は毎朝庭の花に水をやります。"),
    ("es", "Mi hermano aprendió a tocar la guitarra.", "ru", "Отчёт о продажах нужно отправить до пятницы."),
    ("de", "Die Heizung im Büro ist wieder kaputt.", "ko", "우리는 주말에 산에서 캠핑을 했습니다."),
    ("hi", "बच्चे पार्क में फुटबॉल खेल रहे हैं।", "en", "The compiler flagged an unused variable."),
    ("el", "Το πλοίο για τη Νάξο φεύγει στις οκτώ.", "it", "La riunione con il cliente è stata rinviata."),
)


def probe_cosines(embedder: Embedder) -> list[float] | None:
    """Cosine of each probe pair in ``embedder``'s space, or None if any probe embedded to zero."""
    left = embedder.embed([pair[1] for pair in PROBE_PAIRS]).astype(np.float64)
    right = embedder.embed([pair[3] for pair in PROBE_PAIRS]).astype(np.float64)
    left_norms = np.linalg.norm(left, axis=1)
    right_norms = np.linalg.norm(right, axis=1)
    if (left_norms == 0).any() or (right_norms == 0).any():
        return None
    values = np.einsum("ij,ij->i", left, right) / (left_norms * right_norms)
    return [float(value) for value in values]


def measure_admission_gate(embedder: Embedder) -> float | None:
    """Worst probe cosine + :data:`GATE_MARGIN`, capped at 1.0; None refuses semantic-only admission."""
    values = probe_cosines(embedder)
    if values is None:
        return None
    return min(1.0, max(values) + GATE_MARGIN)


def measure_semantic_floor(embedder: Embedder) -> float | None:
    """Mean probe cosine clamped to [0, 0.98]; None when a probe embedded to zero."""
    values = probe_cosines(embedder)
    if values is None:
        return None
    return min(0.98, max(0.0, sum(values) / len(values)))
