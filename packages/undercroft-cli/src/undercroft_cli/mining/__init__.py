"""Mining: discovering files and turning documents and transcripts into verbatim drawer plans.

The pure half of ``undercroft mine``, ``sweep`` and ``transcript render``: it reads files and plans drawers;
the commands write the plans through the store.
"""

from undercroft_cli.mining.detection import detect_format, parse_text, parse_transcript
from undercroft_cli.mining.discovery import (
    DEFAULT_MAX_FILE_BYTES,
    Discovery,
    FoundFile,
    MineMode,
    Skip,
    SkipReason,
    discover,
)
from undercroft_cli.mining.errors import AmbiguousFormat, MalformedTranscript, MiningError, UnrecognisedFormat
from undercroft_cli.mining.ignore import IgnoreRule, IgnoreRules, parse_ignore_lines
from undercroft_cli.mining.messages import (
    ROLE_ASSISTANT,
    ROLE_PARTICIPANT,
    ROLE_USER,
    Message,
    Transcript,
    TranscriptFormat,
)
from undercroft_cli.mining.plan import (
    ORIGIN_CONVERSATION,
    ORIGIN_DOCUMENT,
    ORIGIN_MESSAGE,
    DrawerPlan,
    MinePlan,
    plan_mine,
    plan_sweep,
    render_transcript,
)
from undercroft_cli.mining.rooms import (
    AI_TOOL_WING,
    CLAUDE_CODE_WING,
    DEFAULT_ROOM,
    DOCUMENT_ROOM,
    SWEEP_ROOM,
    conversation_room,
    default_wing,
)

__all__ = [
    "AI_TOOL_WING",
    "CLAUDE_CODE_WING",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_ROOM",
    "DOCUMENT_ROOM",
    "ORIGIN_CONVERSATION",
    "ORIGIN_DOCUMENT",
    "ORIGIN_MESSAGE",
    "ROLE_ASSISTANT",
    "ROLE_PARTICIPANT",
    "ROLE_USER",
    "SWEEP_ROOM",
    "AmbiguousFormat",
    "Discovery",
    "DrawerPlan",
    "FoundFile",
    "IgnoreRule",
    "IgnoreRules",
    "MalformedTranscript",
    "Message",
    "MineMode",
    "MinePlan",
    "MiningError",
    "Skip",
    "SkipReason",
    "Transcript",
    "TranscriptFormat",
    "UnrecognisedFormat",
    "conversation_room",
    "default_wing",
    "detect_format",
    "discover",
    "parse_ignore_lines",
    "parse_text",
    "parse_transcript",
    "plan_mine",
    "plan_sweep",
    "render_transcript",
]
