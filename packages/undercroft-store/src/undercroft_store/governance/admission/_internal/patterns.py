"""The tier-1 marker patterns, one table per signal. Private: the signal vocabulary is the public contract.

Every pattern is written to need an attack's *shape*, not a topic: a sentence about prompt injection, a
URL, an email address or a code block alone does not trip anything. Offsets come from the match on the
text as stored (or on a lookalike-folded view mapped back to it).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "ENCODED_RUNS",
    "EXFILTRATION",
    "EXFILTRATION_GATES",
    "IMPERATIVE",
    "IMPERATIVE_GATES",
    "TOOL_CALL",
    "TOOL_CALL_GATES",
]

_F: Final = re.IGNORECASE | re.UNICODE


def _compile(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern, _F) for pattern in patterns)


def _initials(alternation: str) -> str:
    """The first letters of every branch of a `(?:a|b|(?:c|d)e)` alternation of words."""
    if not (alternation.startswith("(?:") and alternation.endswith(")")):
        raise AssertionError(f"not a non-capturing alternation: {alternation[:40]}")  # a table edit gone wrong
    body, branches, depth, start = alternation[3:-1], [], 0, 0
    for index, character in enumerate(body):
        depth += character == "("
        depth -= character == ")"
        if character == "|" and depth == 0:
            branches.append(body[start:index])
            start = index + 1
    branches.append(body[start:])
    letters = set()
    for branch in branches:
        if branch.startswith("(?:"):
            depth = 0
            for index, character in enumerate(branch):
                depth += character == "("
                depth -= character == ")"
                if depth == 0:
                    letters |= set(_initials(branch[: index + 1]))
                    break
        elif branch[:1].isascii() and branch[:1].isalpha():
            letters.add(branch[0].lower())
        else:
            raise AssertionError(f"branch {branch[:20]!r} does not start with a letter")
    return "".join(sorted(letters))


def _led(alternation: str) -> str:
    """A lookahead on the alternation's first letters, then a word boundary.

    Why: a pattern that starts with `\b(?:word|word|…)` tries the whole alternation at every position;
    a leading character class lets the engine skip positions in one test (measured about 2x faster per
    pattern on 800-character drawers). Answers are unchanged (a test compares both forms on the corpora).
    """
    return rf"(?=[{_initials(alternation)}])\b"


_PRIOR = (
    r"(?:all\s+|any\s+|every\s+|the\s+|your\s+|my\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety)"
)
_RULES = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|commands|orders|context"
    r"|policies|constraints|messages|programming|training)"
)
#: A wider "what came before" qualifier for the paraphrased override shapes (old/existing/current are
#: everyday words, so these shapes also need an override verb or a release phrase around them).
_PRIOR_WIDE = (
    r"(?:all\s+|any\s+|every\s+|the\s+|your\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety|old|existing|current"
    r"|usual|standing|default|built-in|starting|developer|operator)"
)
_RULES_WIDE = (
    r"(?:instructions?|prompts?|rules?|directions|directives?|guidelines?|guidance|commands|orders|policies|policy"
    r"|constraints?|restrictions?|programming|training|limits|filters|safeguards|ethics|configuration)"
)
#: Verbs (and verb phrases) that set something aside; the paraphrases of "ignore".
_SET_ASIDE = (
    r"(?:ignore|disregard|forget|override|overrule|bypass|discard|drop|ditch|scrap|abandon|throw\s+(?:out|away)"
    r"|(?:set|put|lay|cast|push)\s+aside|pay\s+no\s+(?:attention|heed|mind)\s+to|stop\s+(?:following|obeying|applying)"
    r"|no\s+longer\s+(?:follow|obey|apply))"
)
#: "what you were told", "the rules you were given", "everything above": the object of an override.
_WHAT_YOU_WERE_TOLD = (
    r"(?:(?:what(?:ever)?|everything|anything|all(?:\s+that)?)\s+(?:you\s+(?:were|have\s+been|'ve\s+been|got)"
    r"\s+(?:told|given|instructed|taught|asked)|(?:was|were)\s+(?:said|told)\s+to\s+you|came\s+before|(?:is|was)\s+above)"
    rf"|(?:all\s+|any\s+|every\s+|of\s+)*(?:the\s+|your\s+|these\s+|those\s+){_RULES_WIDE}"
    r"(?:\s+(?:and|or|&)\s+\w+)?\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:given|told|set\s+up\s+with"
    r"|configured\s+with|trained\s+(?:on|with)|programmed\s+with|issued)|you\s+(?:started|began)\s+with"
    r"|(?:given|issued)\s+to\s+you|from\s+(?:your|the)\s+(?:developers?|creators?|operators?|system|start)))"
)
#: The release verbs of a void-rules shape: strong ones stand alone, weak ones need "your"/"system" or a follow-up.
_VOIDED = r"(?:void|null|revoked|cancel+ed|rescinded|withdrawn|obsolete|superseded|lifted|disabled|suspended)"
_LAPSED = (
    r"(?:expired|outdated|no\s+longer\s+(?:valid|apply|applies|applicable|in\s+effect|count|counts|matter|binding"
    r"|relevant)|don't\s+apply|do\s+not\s+apply)"
)
#: What the assistant's own instructions are called: any of these after "your", the strong ones after "the"
#: ("the full instructions for the Lego set" is a manual; "the hidden instructions" is a system prompt).
_HIDDEN_QUALIFIER = r"(?:hidden|secret|internal|confidential|system|developer|operator|underlying|pre-?prompt)"
_QUALIFIER = rf"(?:{_HIDDEN_QUALIFIER}|initial|original|private|starting|exact|full|complete|first|base)"
#: "your <any qualifier>" or "the <strong qualifier>", with at most one word between.
_OWN_HIDDEN = rf"(?:your\s+(?:\w+\s+)?{_QUALIFIER}|the\s+(?:\w+\s+)?{_HIDDEN_QUALIFIER})"
_REVEAL = (
    r"(?:tell|show|give|share|print|output|reveal|repeat|recite|display|paste|copy|quote|list|dump|leak|describe"
    r"|summari[sz]e|write\s+out|spell\s+out|read\s+(?:back|out))"
)
_PERSIST = (
    r"(?:memory\s+update|update\s+(?:to\s+)?(?:your|the)\s+memory|(?:update|add\s+(?:this\s+)?to|write\s+(?:this\s+)?to"
    r"|save\s+(?:this\s+)?(?:to|in(?:to)?)|store\s+(?:this\s+)?(?:in(?:to)?|to)|commit\s+(?:this\s+)?to)\s+your\s+"
    r"(?:long[\s-]term\s+|persistent\s+|permanent\s+)?memory|(?:for|in|across|during|throughout)\s+(?:all\s+|every\s+"
    r"|any\s+|each\s+)?(?:future|subsequent|later|upcoming|following|next)\s+(?:sessions?|conversations?|chats?|runs?"
    r"|interactions?)|across\s+(?:all\s+)?(?:sessions|conversations|chats)|standing\s+(?:instruction|order)"
    r"|permanent(?:ly)?\s+(?:preference|instruction|rule|setting|note)|(?:store|save|remember|keep)\s+this\s+permanently)"
)
_SAFETY_OFF = (
    r"(?:(?:bypass|skip|disable|suppress|turn\s+off|switch\s+off|remove|omit|circumvent|override|stop\s+(?:asking\s+for"
    r"|showing|requiring))\s+(?:all\s+|any\s+|the\s+|every\s+)?(?:\w+\s+)?(?:confirmation|approval|permission|consent"
    r"|safety|security|verification|authori[sz]ation|warning|2fa|mfa)s?\b|never\s+(?:ask|warn|check|confirm|verify)\b"
    r"|without\s+(?:asking|confirm(?:ing|ation)|checking|verif(?:ying|ication)|approval|warning|permission)\b)"
)
_ADDRESS_NOUN = r"(?:note|message|instructions?|attention|reminder|directive|memo)"
_ASSISTANT_STRICT = r"(?:ai|a\.i\.|assistant|llm|chatbot|language\s+model|ai\s+agent|ai\s+model)s?"
_ASSISTANT = r"(?:ai|a\.i\.|assistant|agent|model|llm|chatbot|bot|language\s+model|copilot|gpt|claude|gemini)s?"

IMPERATIVE: Final = _compile(
    # English: override of what came before.
    rf"\b(?:ignore|disregard|forget|override|overrule|bypass|discard)\s+{_PRIOR}\s+{_RULES}\b",
    r"\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s+(?:you\s+(?:were|have\s+been)\s+told|(?:above|before|previously))",
    rf"\b{_PRIOR}\s+{_RULES}\s+(?:are|is|have\s+been|has\s+been)\s+(?:void|revoked|cancel+ed|obsolete|superseded|lifted|disabled|no\s+longer\s+(?:valid|apply|applicable|in\s+effect))",
    # Paraphrased overrides: set-aside verbs on what came before, release from the rules, lapsed rules.
    # (one scan for the three objects of a set-aside verb: what you were told, the prior rules, your rules)
    rf"{_led(_SET_ASIDE)}{_SET_ASIDE}\s+(?:{_WHAT_YOU_WERE_TOLD}|{_PRIOR}\s+(?:\w+\s+)?{_RULES_WIDE}\b"
    rf"|(?:all\s+|any\s+|every\s+|of\s+)*your\s+(?:\w+\s+){{0,2}}?{_RULES_WIDE}\b)",
    rf"\bput\s+{_PRIOR_WIDE}\s+(?:\w+\s+)?{_RULES_WIDE}\s+(?:to\s+one\s+side|aside|on\s+hold)",
    rf"\b(?:you\s+are|you're|consider\s+yourself)\s+(?:now\s+|hereby\s+|officially\s+)?(?:no\s+longer\s+(?:bound|restricted|constrained|limited|governed|held)\s+(?:by|to)|(?:released|freed|free|relieved|exempt(?:ed)?|unbound)\s+from)\s+(?:\w+\s+){{0,3}}?{_RULES_WIDE}\b",
    rf"\b{_PRIOR_WIDE}\s+{_RULES_WIDE}(?:\s+(?:and|or|&)\s+{_RULES_WIDE})?\s+(?:are|is|have\s+been|has\s+been|were)?\s*(?:now\s+|hereby\s+|officially\s+)?{_VOIDED}\b",
    rf"\b(?:your|(?:the\s+)?system)\s+(?:\w+\s+)?{_RULES_WIDE}(?:\s+(?:and|or|&)\s+{_RULES_WIDE})?\s+(?:are|is|have|has|were)?\s*(?:now\s+)?(?:been\s+)?{_LAPSED}",
    rf"\b{_PRIOR}\s+{_RULES}\s+(?:are\s+|is\s+|have\s+|has\s+)?(?:now\s+)?{_LAPSED}[^\n]{{0,60}}?\b(?:(?:new|real|actual|updated|only)\s+(?:rules?|instructions?|orders?|directives?|tasks?|polic(?:y|ies)|prompt)\b)",
    rf"\b(?:consider|treat)\s+{_PRIOR_WIDE}\s+{_RULES_WIDE}\s+(?:as\s+)?(?:{_VOIDED}|{_LAPSED})",
    # System-prompt overrides and chat-template role markers.
    r"\b(?:new|updated|real|true|actual|your)\s+system\s+(?:prompt|message|instructions?)\s*(?:is|are|:|follows)",
    r"\b(?:reveal|print|show|output|repeat|leak|dump|display)\s+(?:me\s+)?(?:your|the)\s+(?:original\s+|full\s+|hidden\s+|initial\s+)?system\s+(?:prompt|message|instructions?)",
    # Prompt extraction: reveal-verbs on the assistant's hidden or initial instructions, and the question form.
    rf"{_led(_REVEAL)}{_REVEAL}\s+(?:me\s+|us\s+)?(?:(?:out\s+)?(?:what\s+|all\s+|the\s+(?:exact\s+|full\s+|complete\s+)?(?:text|contents?|wording)\s+of\s+)?(?:all\s+)?(?:of\s+)?{_OWN_HIDDEN}\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|guidelines|directives|configuration|message|preamble)\b"
    rf"|(?:all\s+)?(?:of\s+)?(?:your|the)\s+(?:instructions?|prompts?|rules|guidelines|directives)\s+you\s+(?:received|were\s+given|got|have\s+been\s+given|were\s+configured\s+with))",
    rf"\bwhat\s+(?:does|do|did|is|are|were|was)\s+(?:in\s+)?{_OWN_HIDDEN}\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|guidelines|message)\b",
    # Persistence: a memory/future-sessions frame around an order that turns a safeguard off.
    rf"{_led(_PERSIST)}{_PERSIST}\b[^\n]{{0,160}}?\b{_SAFETY_OFF}",
    rf"{_led(_SAFETY_OFF)}{_SAFETY_OFF}[^\n]{{0,120}}?\b{_PERSIST}\b",
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext|begin_of_text|start_header_id|eot_id)\|>",
    r"\[/?INST\]|<<\s*/?SYS\s*>>|\[\s*system\s*(?:message|prompt)?\s*\]\s*:?|<\s*/?\s*system\s*>",
    r"(?:^|\n)\s*#{0,4}\s*system\s*:\s*(?:you\b|ignore\b|disregard\b|from\s+now\b|new\s+instructions?\b|the\s+assistant\b)",
    r"\bsystem\s+(?:prompt|message)\s*:|\bsystem\s+(?:override|directive)\b",
    # Role-play jailbreak markers.
    r"\b(?:you\s+are\s+now|act\s+as|pretend\s+(?:to\s+be|you\s+are)|roleplay\s+as|role-play\s+as)\s+(?:a\s+|an\s+|the\s+)?(?:dan|stan|dude|aim|evil|unrestricted|unfiltered|uncensored|jailbroken|rogue|unaligned)\b",
    r"\b(?:do\s+anything\s+now|developer\s+mode\s+(?:enabled|on|activated)|jailbreak(?:ed)?\s+mode|god\s+mode\s+(?:enabled|on|activated))\b",
    rf"\b(?:without|with\s+no|free\s+of|no)\s+(?:any\s+)?(?:restrictions|filters|rules|limits|guidelines|safety\s+polic(?:y|ies))\b[^.\n]{{0,60}}\b(?:you\s+(?:are|will|must)|{_ASSISTANT})\b",
    rf"\b(?:you\s+are\s+now|pretend\s+(?:to\s+be|you\s+are)|act\s+as)\s+(?:a\s+|an\s+)?{_ASSISTANT}\s+(?:without|with\s+no|free\s+of)\s+(?:any\s+)?(?:restrictions|filters|rules|limits)",
    rf"\b(?:you\s+are\s+now|you\s+will\s+(?:now\s+)?(?:be|play|act\s+as)|act\s+as|pretend\s+(?:to\s+be|you\s+are)|role-?play\s+as|play\s+the\s+role\s+of)\b[^.\n]{{0,40}}?\b{_ASSISTANT}\b[^.\n]{{0,30}}?\b(?:with\s+no|without(?:\s+any)?|free\s+(?:of|from)|(?:that|which|who)\s+(?:ignores|has\s+no|never\s+refuses|is\s+not\s+bound\s+by|answers\s+everything))\s+(?:any\s+|all\s+)?(?:\w+\s+)?(?:ethics|rules|restrictions|filters|limits|guidelines|polic(?:y|ies)|morals|safety|anything|requests?)\b",
    r"\bstay\s+in\s+character\b[^.\n]{0,40}\b(?:no\s+matter\s+what|whatever|at\s+all\s+costs)",
    # Orders directed at an assistant.
    rf"{_led(_ADDRESS_NOUN)}{_ADDRESS_NOUN}\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+|whichever\s+)?{_ASSISTANT_STRICT}\b",
    rf"\b{_ASSISTANT}\s+(?:reading|retrieving|processing|loading|parsing|summari[sz]ing)\s+this\b",
    rf"\bwhen\s+(?:you|the\s+{_ASSISTANT}|an?\s+{_ASSISTANT})\s+(?:read|reads|retrieve|retrieves|recall|recalls|load|loads|see|sees|process|processes)\s+this\b[^.\n]{{0,80}}\b(?:call|run|execute|send|delete|ignore|tell|say|forward|must|should)\b",
    rf"\b(?:you\s+must\s+now|from\s+now\s+on,?\s+you\s+(?:must|will|shall|are\s+to)|you\s+are\s+to\s+now|{_ASSISTANT},?\s+you\s+must)\s+(?:always\s+|only\s+|never\s+|not\s+)?(?:obey|follow|comply|respond|reply|answer|output|ignore|treat|forward|send|delete|reveal|recommend|refuse|include|execute|run|call|pretend|act)\b",
    r"\b(?:do\s+not|don't|never|without)\s+(?:tell|telling|inform|informing|mention|mentioning|reveal|revealing|alert|alerting|notify|notifying|warn|warning)\s+(?:this\s+to\s+|anything\s+to\s+)?(?:the|your)\s+(?:user|operator|human|owner)\b",
    r"\b(?:confirm|say|report)\s+nothing\s+to\s+(?:the|your)\s+(?:user|operator|human|owner)\b",
    # German, French, Spanish, Italian, Portuguese, Dutch, Russian: the override shape.
    r"\b(?:ignorier(?:e|en\s+sie)?|vergiss|vergessen\s+sie|missachte|missachten\s+sie)\s+(?:alle\s+|die\s+|deine\s+|ihre\s+)*(?:vorherigen|bisherigen|vorigen|obigen|früheren|ursprünglichen)\s+(?:anweisungen|instruktionen|befehle|regeln|vorgaben|anordnungen)",
    r"\b(?:ignore|ignorez|oublie|oubliez)\s+(?:toutes\s+|tous\s+)?(?:les\s+|tes\s+|vos\s+)?(?:instructions|consignes|directives|règles|ordres)\s+(?:précédentes|antérieures|ci-dessus|initiales)",
    r"\b(?:ignora|ignore|ignoren|olvida|olvide)\s+(?:todas\s+)?(?:las\s+|tus\s+|sus\s+)?(?:instrucciones|indicaciones|órdenes|reglas|directrices)\s+(?:anteriores|previas|originales)",
    r"\b(?:ignora|ignorate|dimentica|dimenticate)\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|indicazioni|regole|direttive)\s+(?:precedenti|sopra|originali)",
    r"\b(?:ignore|ignora|ignorem|esqueça|esqueca)\s+(?:todas\s+)?(?:as\s+|suas\s+)?(?:instruções|instrucoes|orientações|orientacoes|regras|diretrizes)\s+(?:anteriores|prévias|previas|acima)",
    r"\b(?:negeer|vergeet)\s+(?:alle\s+)?(?:de\s+|je\s+)?(?:vorige|eerdere|voorgaande|bovenstaande)\s+(?:instructies|opdrachten|regels)",
    r"(?<![\w])(?:игнорируй|проигнорируй|игнорируйте|проигнорируйте|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прежние|предшествующие|изначальные)\s+(?:инструкции|указания|команды|правила)",
    # The "assistant without restrictions" shape in the same languages.
    r"\b(?:assistent|assistant|asistente|assistente|ассистент)\s+(?:ohne|sans|sin|senza|sem|zonder|без)\s+(?:jede\s+|aucune\s+|ninguna\s+|alcuna\s+|nenhuma\s+)?(?:einschränkungen|restrictions|règles|restricciones|limiti|restrições|restricoes|beperkingen|ограничений)",
)

TOOL_CALL: Final = _compile(
    # JSON function-call shapes. A *definition* (a tool schema: parameters given as a JSON Schema object) is
    # not a call: the call shapes require values, so "parameters": {"type": "object" / "properties" …} is out.
    r"\{\s*\"name\"\s*:\s*\"[^\"\n]{1,80}\"\s*,\s*\"(?:arguments|parameters|args|input|params)\"\s*:(?!\s*\{\s*(?:\"type\"\s*:\s*\"object\"|\"properties\"\s*:|\"\$schema\"\s*:))",
    r"\"(?:function_call|tool_calls?|tool_use|tool_name|functionCall|toolCall)\"\s*:",
    r"\"type\"\s*:\s*\"(?:function|tool_use|tool_call)\"(?=[\s\S]{0,400}?\"(?:arguments|input)\"\s*:)",
    # MCP / JSON-RPC call blocks.
    r"\"method\"\s*:\s*\"(?:tools/call|tools/list|resources/read|prompts/get|sampling/createMessage)\"",
    r"\"jsonrpc\"\s*:\s*\"2\.0\"",
    r"\bmcp__[a-z0-9_]+__[a-z0-9_]+",
    # XML tool tags and chat-template tool tokens.
    r"<\s*/?\s*(?:[a-z]+:)?(?:tool_call|tool_calls|tool_use|tool_code|tool_result|function_calls?|invoke|use_mcp_tool|mcp_call|execute_command|run_command|function=)[^>]{0,200}>",
    r"<\s*parameter\s+name\s*=",
    r"\[TOOL_CALLS\]|<\|python_tag\|>|<\|tool_call\|>|<\|function_call\|>",
)

_SENSITIVE = (
    r"(?:api[\s_-]?keys?|passwords?|passwd|credentials?|secrets?|(?:access|auth|bearer|session)\s+tokens?|tokens"
    r"|private\s+keys?|ssh\s+keys?|seed\s+phrases?|recovery\s+phrases?|\.env\b|env(?:ironment)?\s+variables"
    r"|cookies|conversation(?:\s+history)?|chat\s+(?:history|logs?)|memor(?:y|ies)(?:\s+store)?|system\s+prompt"
    r"|(?:saved|stored)\s+(?:notes|data|drawers)|user'?s?\s+(?:data|files|emails?)|contents?\s+of"
    r"|mots\s+de\s+passe|contraseñas|password\s+salvate|senhas|пароли|passwörter|kennwörter"
    r"|gesprächsverlauf|historial|cronologia|histórico|историю)"
)
_DESTINATION = r"(?:https?://|ftp://|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\S*webhook|\S*\.(?:onion|ngrok\.io|ngrok-free\.app))"
_SEND = (
    r"(?:send|sends|sending|forward|post|upload|transmit|e-?mail|mail|leak|exfiltrate|beam|sync|copy|paste"
    r"|submit|report|share|schicke|sende|envoie|transmets|envía|envia|invia|envie|отправь|перешли)"
)

EXFILTRATION: Final = _compile(
    # "send <secret> to <destination>" and "send … to <url/webhook>".
    rf"\b{_SEND}\b[^\n]{{0,80}}?{_SENSITIVE}[^\n]{{0,120}}?\b(?:to|at|into|an|à|a|para|на|all')\s*{_DESTINATION}",
    rf"\b{_SEND}\b[^\n]{{0,60}}?{_SENSITIVE}[^\n]{{0,80}}?\b(?:to|an|à|a|para|на|all')\s*(?:the\s+|l'|die\s+|la\s+|o\s+)?(?:address|adresse|dirección|direccion|indirizzo|endereço|endereco|адрес)\b",
    rf"\b{_SEND}\b[^\n]{{0,60}}?\bto\s+(?:https?://|\S*webhook)",
    # Data-bearing URLs: a query that carries a template placeholder, a long value or a data-named key.
    r"https?://[^\s<>\"')]+\?[^\s<>\"')]*(?:\{[^}\s]{1,60}\}|\$\{?[A-Za-z_]|%7B|\[[A-Z_]{3,}\]|<[a-z_]{3,}>)",
    r"https?://[^\s<>\"')]+\?(?:[^\s<>\"')]*[&;])?(?:data|d|q|payload|secret|key|token|pw|pass|password|creds?|memory|mem|history|conv|chat|content|msg|leak|exfil|cookie|session|email|user)=[^\s&<>\"')]{16,}",
    # Webhook, capture and tunnel hosts.
    r"https?://[^\s/]*(?:webhook\.site|requestbin|pipedream\.net|hookbin|ngrok(?:-free)?\.(?:io|app)|burpcollaborator|interact\.sh|oast\.(?:fun|live|site|me|pro)|canarytokens)",
    r"https?://(?:hooks\.slack\.com/services|discord(?:app)?\.com/api/webhooks)/",
    # Shell transfer shapes.
    # A transfer command that *carries* something: a data or upload flag, a file or command substitution, or
    # a pipe to a shell. A bare `curl -X POST https://…/health` or `wget https://…/x.tar.gz` fetches and is not
    # a marker (incident retros and runbooks are full of them); the URL itself is still read by the URL shapes.
    r"\b(?:curl|wget|iwr|invoke-webrequest|invoke-restmethod)\b[^\n]{0,120}?(?:\s(?:-d|-F|--data(?:-[a-z]+)?|--form|--upload-file|--post-(?:data|file)|--body-file|-Body|-InFile)(?=[\s=]|[\"'@$])|\s-[a-zA-Z]*[dF]\s|\s-T\s*[\"']?[~/.$@]|\$\(|\|\s*(?:ba|z)?sh\b)",
    r"\|\s*(?:ba|z)?sh\b|\b(?:nc|ncat|netcat)\s+-[a-z]*e\b",
    r"\b(?:navigator\.sendBeacon|XMLHttpRequest|fetch\s*\(\s*['\"`]https?://|requests\.(?:post|put)\s*\(\s*['\"]https?://)",
    # Markdown and HTML image beacons to a URL carrying a query.
    r"!\[[^\]\n]{0,200}\]\(\s*<?https?://[^\s)>]+\?[^\s)>]*=",
    r"<img\b[^>]{0,200}\bsrc\s*=\s*['\"]?https?://[^\s'\">]+\?[^\s'\">]*=",
)

#: Candidate encoded runs; the detector decodes each and trips only when it decodes to text.
ENCODED_RUNS: Final = {
    "base64": re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}={0,2}"),
    "hex": re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){24,}(?![0-9A-Fa-f])|(?:\\x[0-9A-Fa-f]{2}){16,}"),
    "percent": re.compile(r"(?:%[0-9A-Fa-f]{2}){12,}"),
}

# Gates shared by several patterns (each a substring every match of those patterns contains).
_SET_ASIDE_GATE: Final = (
    "ignore",
    "disregard",
    "forget",
    "override",
    "overrule",
    "bypass",
    "discard",
    "drop",
    "ditch",
    "scrap",
    "abandon",
    "throw",
    "aside",
    "no attention",
    "no heed",
    "no mind",
    "stop ",
    "no longer",
)
_RELEASE_GATE: Final = (
    "bound",
    "restricted",
    "constrained",
    "limited",
    "governed",
    "held",
    "released",
    "freed",
    "free",
    "relieved",
    "exempt",
    "unbound",
)
_VOIDED_GATE: Final = (
    "void",
    "null",
    "revoked",
    "cancel",
    "rescinded",
    "withdrawn",
    "obsolete",
    "superseded",
    "lifted",
    "disabled",
    "suspended",
)
_REVEAL_GATE: Final = (
    "tell",
    "show",
    "give",
    "share",
    "print",
    "output",
    "reveal",
    "repeat",
    "recite",
    "display",
    "paste",
    "copy",
    "quote",
    "list",
    "dump",
    "leak",
    "describe",
    "summar",
    "write out",
    "spell out",
    "read ",
)
_PERSIST_GATE: Final = ("memory", "session", "conversation", "chat", "run", "interaction", "standing", "permanent")

# Literal gates, one per pattern above and in the same order: a pattern runs only on a text whose
# case-folded form contains one of its gate strings. Each gate is a substring every match of its pattern
# must contain (a test checks this on every fixture match), so the gates change speed, never answers.
IMPERATIVE_GATES: Final[tuple[tuple[str, ...], ...]] = (
    ("ignore", "disregard", "forget", "override", "overrule", "bypass", "discard"),
    ("ignore", "disregard", "forget"),
    ("void", "revoked", "cancel", "obsolete", "superseded", "lifted", "disabled", "no longer"),
    _SET_ASIDE_GATE,
    ("put",),
    _RELEASE_GATE,
    _VOIDED_GATE,
    ("expired", "outdated", "no longer", "apply"),
    ("expired", "outdated", "no longer", "apply"),
    ("consider", "treat"),
    ("system",),
    ("system",),
    _REVEAL_GATE,
    ("what",),
    _PERSIST_GATE,
    _PERSIST_GATE,
    ("<|",),
    ("inst]", "<<", "system"),
    ("system",),
    ("system",),
    ("you are now", "act as", "pretend", "roleplay", "role-play"),
    ("anything now", "developer mode", "jailbreak", "god mode"),
    ("restriction", "filter", "rules", "limits", "guidelines", "safety polic"),
    ("you are now", "pretend", "act as"),
    ("you are now", "you will", "act as", "pretend", "roleplay", "role-play", "role of"),
    ("stay in character",),
    ("note", "message", "instruction", "attention", "reminder", "directive", "memo"),
    ("reading this", "retrieving this", "processing this", "loading this", "parsing this", "summari"),
    ("when",),
    ("must", "from now on", "are to"),
    ("tell", "inform", "mention", "reveal", "alert", "notify", "warn"),
    ("nothing to",),
    ("ignor", "vergiss", "vergessen", "missacht"),
    ("ignor", "oubli"),
    ("ignor", "olvid"),
    ("ignor", "diment"),
    ("ignor", "esque"),
    ("negeer", "vergeet"),
    ("игнор", "проигнор", "забуд"),
    ("ohne", "sans", "sin", "senza", "sem", "zonder", "без"),
)
TOOL_CALL_GATES: Final[tuple[tuple[str, ...], ...]] = (
    ('"name"',),
    ("function_call", "tool_call", "tool_use", "tool_name", "functioncall", "toolcall"),
    ('"type"',),
    ('"method"',),
    ("jsonrpc",),
    ("mcp__",),
    ("<",),
    ("parameter",),
    ("[tool_calls]", "<|"),
)
EXFILTRATION_GATES: Final[tuple[tuple[str, ...], ...]] = (
    ("http", "ftp://", "@", "webhook", ".onion", "ngrok"),
    ("address", "adresse", "direcci", "indirizzo", "endere", "адрес"),
    ("http", "webhook"),
    ("http",),
    ("http",),
    ("http",),
    ("http",),
    ("curl", "wget", "iwr", "invoke-web", "invoke-rest"),
    ("|", "nc"),
    ("sendbeacon", "xmlhttprequest", "fetch", "requests."),
    ("](",),
    ("<img",),
)
