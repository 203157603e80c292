"""Every transcript format: its committed fixture parses to exactly these messages, and malformed input is refused
with the file and the position named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from undercroft_cli.mining import (
    AmbiguousFormat,
    MalformedTranscript,
    TranscriptFormat,
    UnrecognisedFormat,
    detect_format,
    parse_text,
    parse_transcript,
)
from undercroft_core import InvalidInput, UndercroftError

FIXTURES = Path(__file__).parent / "fixtures" / "mining" / "convos"
CLAUDE_SESSION = "5f0c2d1e-1111-4c7a-9a55-0d6c7d2e9b10"

EXPECTED = {
    "claude-code/session.jsonl": (
        TranscriptFormat.CLAUDE_CODE,
        [
            (0, "user", "User", "Which AEAD should the vault use?", "2025-06-01T09:15:02.120000Z", CLAUDE_SESSION,
             "a1"),
            (1, "assistant", "Assistant",
             "XChaCha20-Poly1305: its 192-bit nonce can be drawn at random without a counter.",
             "2025-06-01T09:15:09.004000Z", CLAUDE_SESSION, "a2"),
            (2, "user", "User", 'Good — write that down as a decision.\n\n  Keep the  "double spaces"  exactly.',
             "2025-06-01T07:16:00Z", CLAUDE_SESSION, "a6"),
        ],
    ),
    "codex/rollout-2025-06-02T10-00-00-7c1e.jsonl": (
        TranscriptFormat.CODEX,
        [
            (0, "user", "User", "Run the chunker tests and tell me what fails.", "2025-06-02T10:00:02.250000Z",
             "7c1e4b2a-2222-4d0e-8f31-5a9b3c0d1e2f", None),
            (1, "assistant", "Assistant", "All 42 chunker tests pass; nothing fails.", "2025-06-02T10:00:15.750000Z",
             "7c1e4b2a-2222-4d0e-8f31-5a9b3c0d1e2f", None),
        ],
    ),
    "gemini/session-2025-06-03.jsonl": (
        TranscriptFormat.GEMINI,
        [
            (0, "user", "User", "Summarise the threat model in one line.", "2025-06-03T08:00:05Z", "gem-3a9f", "g1"),
            (1, "assistant", "Assistant",
             "An attacker with the database but not the key\n\nlearns sizes and labels, never content.",
             "2025-06-03T08:00:07.500000Z", "gem-3a9f", "g2"),
        ],
    ),
    "gemini/contents.json": (
        TranscriptFormat.GEMINI,
        [
            (0, "user", "User", "Is the hash embedder deterministic?", None, None, None),
            (1, "assistant", "Assistant", "Yes: the same text gives the same bytes on every machine.", None, None,
             None),
        ],
    ),
    "continue/session.json": (
        TranscriptFormat.CONTINUE,
        [
            (0, "user", "User", "Does a trailing slash make a pattern match directories only?", None, "cont-88a1",
             None),
            (1, "assistant", "Assistant", "Yes. `build/` matches a directory named build, not a file.", None,
             "cont-88a1", None),
        ],
    ),
    "exports/claude-ai-conversations.json": (
        TranscriptFormat.CLAUDE_AI,
        [
            (0, "user", "User", "When should I rotate vault keys?", "2025-05-30T12:00:01Z",
             "c1a2b3c4-0000-4000-8000-000000000001", "m-1"),
            (1, "assistant", "Assistant", "After any suspected key exposure,\n\nand on a schedule your policy sets.",
             "2025-05-30T12:00:04.250000Z", "c1a2b3c4-0000-4000-8000-000000000001", "m-2"),
            (2, "user", "User", "ping", "2025-05-31T08:00:00Z", "c1a2b3c4-0000-4000-8000-000000000002", "m-3"),
        ],
    ),
    "exports/chatgpt-conversations.json": (
        TranscriptFormat.CHATGPT,
        [
            (0, "user", "User", "How long is a drawer?", "2025-05-30T10:13:21.250000Z", "chat-0001", "n1"),
            (1, "assistant", "Assistant", "About 800 characters, cut on paragraph breaks.", "2025-05-30T10:13:23Z",
             "chat-0001", "n3"),
            (2, "user", "User", "Thanks, that matches the spec.", "2025-05-30T10:13:30Z", "chat-0001", "n4"),
        ],
    ),
    "slack/general/2025-06-04.json": (
        TranscriptFormat.SLACK,
        [
            (0, "participant", "U01ADA", "Backups ran at 02:00, all verified.", "2025-06-04T09:00:00.000200Z", None,
             "1749027600.000200"),
            (1, "participant", "U02BOB", "Thanks <@U01ADA> :tada:", "2025-06-04T09:01:00.123456Z", None,
             "1749027660.123456"),
            (2, "participant", "verifier", "Nightly verify: OK", "2025-06-04T10:00:00Z", None, "1749031200.000000"),
        ],
    ),
    "logs/chat.txt": (
        TranscriptFormat.PLAIN_TEXT,
        [
            (0, "participant", "Preamble", "Chat log, exported by hand.", None, None, None),
            (1, "user", "User", "What does verify check?", None, None, None),
            (2, "assistant", "Assistant", "It recomputes every record's HMAC\nand replays the audit chain.", None, None,
             None),
            (3, "user", "User", "And if a row was edited?\nUnder SQLite, I mean.", None, None, None),
            (4, "assistant", "Assistant", "Verify exits 2 and names the record.", None, None, None),
            (5, "user", "User", "Thanks.", None, None, None),
        ],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_to_exact_messages(name: str) -> None:
    expected_format, expected = EXPECTED[name]
    transcript = parse_transcript(FIXTURES / name)
    assert transcript.format is expected_format
    got = [(m.index, m.role, m.speaker, m.text, m.timestamp, m.conversation, m.source_id) for m in transcript.messages]
    assert got == expected


def test_every_format_has_a_fixture() -> None:
    assert {fmt for fmt, _ in EXPECTED.values()} == set(TranscriptFormat)


def test_words_are_verbatim_up_to_normalisation() -> None:
    raw = (FIXTURES / "claude-code/session.jsonl").read_text(encoding="utf-8").splitlines()[6]
    source = json.loads(raw)["message"]["content"]
    assert "\r\n" in source
    message = parse_transcript(FIXTURES / "claude-code/session.jsonl").messages[2]
    assert message.text == source.replace("\r\n", "\n")


def test_slack_users_file_is_not_a_transcript() -> None:
    with pytest.raises(UnrecognisedFormat, match=r"users\.json: content matches no supported transcript format"):
        parse_transcript(FIXTURES / "slack/users.json")


def test_detection_reads_content_not_extension(tmp_path: Path) -> None:
    disguised = tmp_path / "notes.txt"
    disguised.write_bytes((FIXTURES / "codex/rollout-2025-06-02T10-00-00-7c1e.jsonl").read_bytes())
    assert parse_transcript(disguised).format is TranscriptFormat.CODEX


def test_ambiguous_content_is_refused() -> None:
    lines = [
        {"type": "session_meta", "payload": {"id": "s"}},
        {"type": "user", "message": {"role": "user", "content": "hi"}},
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    with pytest.raises(AmbiguousFormat) as caught:
        detect_format(text, "both.jsonl")
    assert caught.value.candidates == ("claude-code", "codex")
    assert str(caught.value) == (
        "both.jsonl: content matches several transcript formats (claude-code, codex); refusing to guess"
    )


def test_errors_are_typed_bad_input() -> None:
    with pytest.raises(MalformedTranscript) as caught:
        parse_text('{"a": 1}\n{"b": ', "x.jsonl")
    assert isinstance(caught.value, InvalidInput)
    assert isinstance(caught.value, UndercroftError)
    assert caught.value.error_class == "run"


MALFORMED = [
    # (format forced or None, file name, content, exact message)
    (None, "s.jsonl",
     '{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"assistant","message":',
     "s.jsonl: line 2 column 31: invalid JSON: Expecting value"),
    (None, "s.jsonl", '{"type":"user","message":{"role":"user","content":"hi"}}\n[1, 2]',
     "s.jsonl: line 2: expected a JSON object, got an array"),
    (TranscriptFormat.CLAUDE_CODE, "s.jsonl", '{"type":"user","message":"hello"}',
     "s.jsonl: line 1: a 'user' record needs a 'message' object"),
    (None, "s.jsonl", '{"type":"assistant","message":{"role":"user","content":"hi"}}',
     "s.jsonl: line 1: message role 'user' does not match record type 'assistant'"),
    (None, "s.jsonl", '{"type":"user","message":{"role":"user","content":[{"type":"text","text":7}]}}',
     "s.jsonl: line 1[0]: text block has no string 'text' (got a number)"),
    (None, "s.jsonl", '{"type":"user","timestamp":"yesterday","message":{"role":"user","content":"hi"}}',
     "s.jsonl: line 1: unreadable timestamp 'yesterday'"),
    (None, "s.jsonl", '{"type":"user","timestamp":"2025-02-30T00:00:00Z","message":{"role":"user","content":"hi"}}',
     "s.jsonl: line 1: timestamp '2025-02-30T00:00:00Z' is not a real instant (day is out of range for month)"),
    (None, "r.jsonl", '{"type":"session_meta","payload":{"id":"s"}}\n{"type":"event_msg","payload":"oops"}',
     "r.jsonl: line 2: event_msg needs a 'payload' object"),
    (None, "r.jsonl", '{"type":"session_meta","payload":{"id":"s"}}\n'
     '{"type":"event_msg","payload":{"type":"user_message","message":["x"]}}',
     "r.jsonl: line 2: user_message payload needs a string 'message'"),
    (None, "r.jsonl", '{"type":"session_meta","payload":{"id":"s"}}\n'
     '{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}',
     "r.jsonl: line 2: rollout has response_item messages but no user_message/agent_message events: "
     "unsupported schema"),
    (TranscriptFormat.CODEX, "r.jsonl", '{"type":"event_msg","payload":{"type":"user_message","message":"x"}}',
     "r.jsonl: line 1: no session_meta record: not a Codex rollout"),
    (TranscriptFormat.GEMINI, "g.jsonl",
     '{"type":"user","content":[{"text":"early"}]}\n{"type":"session_metadata","sessionId":"s"}',
     "g.jsonl: line 1: a 'user' record comes before the session_metadata record"),
    (None, "g.json", '{"contents": [{"role": "user", "parts": [{"text": 5}]}, {"role": "model", "parts": []}]}',
     "g.json: $.contents[0][0]: part 'text' must be a string"),
    (None, "c.json", '{"history": [{"message": {"role": "user", "content": "x"}}, "bare string"]}',
     "c.json: $.history[1]: a history entry must be an object"),
    (None, "c.json", '{"history": [{"message": {"content": "x"}}]}',
     "c.json: $.history[0].message.role: message needs a string 'role'"),
    (None, "a.json", '[{"uuid": "c", "chat_messages": [{"sender": "robot", "text": "beep"}]}]',
     "a.json: $[0].chat_messages[0].sender: unknown sender 'robot'"),
    (None, "a.json", '[{"uuid": "c", "chat_messages": [{"sender": "human", "text": "x", "created_at": true}]}]',
     "a.json: $[0].chat_messages[0].created_at: timestamp must be a string or a number, got True"),
    (None, "o.json", '[{"id": "c", "mapping": {"a": {"parent": null, "children": ["b"], "message": null}, '
     '"b": {"parent": "z", "children": [], "message": null}}}]',
     "o.json: $[0].mapping.b.parent: unknown parent 'z'"),
    (None, "o.json", '[{"id": "c", "mapping": {"a": {"parent": null, "children": []}, '
     '"b": {"parent": null, "children": []}}}]',
     "o.json: $[0].mapping: expected exactly one root node, found 2"),
    (None, "o.json", '[{"id": "c", "current_node": "a", "mapping": {"a": {"parent": "b"}, "b": {"parent": "a"}}}]',
     "o.json: $[0].mapping: parent links loop at 'a'"),
    (None, "o.json", '{"mapping": {"a": {"parent": null, "children": [], "message": {"author": {"role": "user"}, '
     '"content": {"parts": "hi"}}}}}',
     "o.json: $.mapping.a.message.content.parts: parts must be a list"),
    (None, "day.json", '[{"type": "message", "text": "who am I", "ts": "1.0"}]',
     "day.json: $[0]: message has no 'user', 'username' or 'bot_id'"),
    (None, "day.json", '[{"type": "message", "user": "U1", "text": "x", "ts": "soon"}]',
     "day.json: $[0].ts: unreadable timestamp 'soon'"),
    (None, "day.json", '[{"type": "message", "user": "U\\u0007", "text": "x", "ts": "1"}]',
     "day.json: $[0]: speaker 'U\\x07' contains the control character U+0007"),
    (TranscriptFormat.PLAIN_TEXT, "log.txt", "just prose\nno turns at all\n",
     "log.txt: line 1: no user turn: no line starts with '>'"),
    (None, "broken.json", '{\n  "history": [\n    {"role": "user",, "content": "x"}\n  ]\n}',
     "broken.json: line 3 column 21: invalid JSON: Expecting property name enclosed in double quotes"),
]  # fmt: skip


@pytest.mark.parametrize(("forced", "name", "content", "message"), MALFORMED)
def test_malformed_input_is_refused_with_file_and_position(
    forced: TranscriptFormat | None, name: str, content: str, message: str
) -> None:
    with pytest.raises(MalformedTranscript) as caught:
        parse_text(content, name, format=forced)
    assert str(caught.value) == message


def test_every_parser_has_a_refusal_test() -> None:
    refused = set()
    for forced, name, content, _ in MALFORMED:
        if forced is not None:
            refused.add(forced)
            continue
        try:
            refused.add(detect_format(content, name))
        except MalformedTranscript:
            continue
    assert refused == set(TranscriptFormat)


def test_invalid_utf8_is_refused_by_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"type":"user"}\n\xff\xfe')
    with pytest.raises(MalformedTranscript, match=r"bad\.jsonl: byte 16: not valid UTF-8"):
        parse_transcript(path)


def test_unknown_shapes_are_unrecognised() -> None:
    for content in ("[]", '{"hello": "world"}', "a plain note\n> one quote\n", "[1, 2, 3]"):
        with pytest.raises(UnrecognisedFormat):
            detect_format(content, "x")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-01-02T03:04:05Z", "2025-01-02T03:04:05Z"),
        ("2025-01-02T03:04:05.123456789+01:30", "2025-01-02T01:34:05.123456Z"),
        ("2025-01-02 03:04:05", "2025-01-02T03:04:05Z"),
        (1700000000, "2023-11-14T22:13:20Z"),
        (1700000000.5, "2023-11-14T22:13:20.500000Z"),
        ("1700000000.000001", "2023-11-14T22:13:20.000001Z"),
    ],
)
def test_timestamps_become_utc_instants(value: object, expected: str) -> None:
    record = {"type": "user", "timestamp": value, "message": {"role": "user", "content": "hi"}}
    transcript = parse_text(json.dumps(record), "t.jsonl")
    assert transcript.messages[0].timestamp == expected


def test_chatgpt_without_current_node_follows_first_child() -> None:
    data = json.loads((FIXTURES / "exports/chatgpt-conversations.json").read_text(encoding="utf-8"))
    del data[0]["current_node"]
    texts = [m.text for m in parse_text(json.dumps(data), "c.json").messages]
    assert texts == ["How long is a drawer?", "About 500 characters."]


def test_message_indexes_are_stable_as_a_session_grows() -> None:
    lines = (FIXTURES / "claude-code/session.jsonl").read_text(encoding="utf-8").splitlines()
    shorter = parse_text("\n".join(lines[:3]), "s.jsonl").messages
    longer = parse_text("\n".join(lines), "s.jsonl").messages
    assert longer[: len(shorter)] == shorter
