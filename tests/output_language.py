"""Is a text in the notebook's language? The checks behind tests/test_output_language.py.

The Russian edition must print no English prose, the English one no Cyrillic. What a lesson shows
on purpose stays verbatim and is not prose: quoted strings (reprs, JSON), text in backticks or «»,
special markers and tags, identifiers, protocol words (`role`, `tool_calls`, ...), the content lines
of a `show_messages` block (what the user and the model wrote), a server's own error text after
`Error code: NNN -`, Python's own message of a built-in exception (`IndexError: list index out of
range`). Anything else that is data (a model's answer printed bare, a chat template's
system prompt) is allowed only by an explicit entry of `ALLOWED`: lesson, snippet, reason.

English prose in a Russian line is found four ways:
- a run of three or more plain English words, two of them common function words
  ("1 message in the history: the tool never ran", "not valid JSON", "the guide loses ...");
- a line without Cyrillic that has two or more plain English words that are not protocol words
  (a table header "variant", "raw text written by", labels "1 call(s)", "special yes/no");
- one English sentence inside a Russian line: a sentence without Cyrillic holding three or more
  lower-case English words that are not protocol words ("Checking both cities now.");
- a one-word English label at the start of a line, quoted or not, followed by a colon or by a
  table's column gap ("'closed'   ...", "skipped: ...").

The Russian prose of the lessons (markdown) is read the same way, paragraph by paragraph
(`markdown_problems`), and the two editions of a markdown cell must have as many paragraphs, links
and code spans (`markdown_shape`): a sentence left out or a link lost shows up as a count.
"""

from __future__ import annotations

import re

CYRILLIC = re.compile(r"[А-Яа-яЁё]")

# Common English words: two of them in a run of three words make it prose.
COMMON = frozenset(
    """
a an the is are was were be been has have had do does did not no yet of to in on at by for from
with without and or but if then than so as it its it's this that these there here you your we our
they their he she his her can cannot can't must should would will may might shall none all any
each every one two only also still just never more most some such into out up about after before
again what which who when where why how message messages call calls error errors got expected
""".split()
)

# Words of the protocol and of Python that both editions show verbatim.
PROTOCOL = frozenset(
    """
role user assistant tool system developer content name arguments id type function tool_calls
finish_reason stop length usage true false none null json python dict list str int float bool
reasoning reasoning_content
""".split()
)

# Lower-case names that both editions print as they are: providers and engine profiles.
NAMES = frozenset(
    """
kimi qwen moonshot vllm sglang ollama llamacpp hermes no_parser stop_with_calls
""".split()
)

# Data a lesson shows on purpose, blanked before the words are looked at.
DATA = [
    re.compile(r"Error code: \d{3} - .*"),  # a server's own error text (OpenAI's wording)
    # Python's own message of a built-in exception (the guide's code failing, shown on purpose)
    re.compile(
        r"\b(?:IndexError|KeyError|TypeError|AttributeError|JSONDecodeError|NameError)"
        r": .*?(?=\s{2,}|$)"
    ),
    re.compile(r"`[^`\n]*`"),  # code in backticks
    re.compile(r"«[^»\n]*»"),  # a quotation
    re.compile(r'"(?:[^"\\\n]|\\.)*"'),  # a double-quoted string (JSON, repr)
    re.compile(r"(?<![\w])'(?:[^'\\\n]|\\.)*'(?![\w])"),  # a single-quoted string (repr)
    re.compile(r"<\|(?:open|close)\|>[^<\n]*?<\|sep\|>"),  # a Kimi K3 (XTML) tag, attributes too
    re.compile(r"<\|[^|<>\s]*\|>|</?[A-Za-z_][\w-]*>"),  # special markers and tags
    re.compile(r"\{[^{}\n]*\}|\[[^\[\]\n]*\]"),  # a dict or list on one line
    re.compile(r"https?://\S+"),
]
PLAIN_WORD = re.compile(r"^[A-Za-z]+(?:'[a-z]+)?$")
EDGE_PUNCTUATION = "\"'.,;:!?()|«»—–"
MESSAGE_HEADER = re.compile(r"^\[\d+\] (?:user|assistant|tool|system)\b")

# (lesson, snippet of the line, reason): data the lesson shows on purpose that the rules above
# cannot tell from prose. Keep it narrow: a snippet allows only lines that contain it, in one lesson.
MODEL_ANSWER = "a model's answer from the cassette, printed as the model wrote it"
PROMPT = "the user prompt sent to the model (English in both editions)"
ALLOWED: tuple[tuple[str, str, str], ...] = (
    ("00_start", "Ready.", MODEL_ANSWER),
    *(
        (lesson, "It's sunny in Beijing today.", MODEL_ANSWER)
        for lesson in ("02_sync_loop", "03_streaming", "04_manual_parsing", "05_qwen_comparison")
    ),
    (
        "02_sync_loop",
        "Beijing is sunny, Shanghai has light rain, and Moscow has snow.",
        MODEL_ANSWER,
    ),
    ("03_streaming", "Shanghai has light rain today, and Moscow has snow.", MODEL_ANSWER),
    (
        "06_thinking_models",
        "Beijing is sunny, Shanghai has light rain, and Moscow has snow.",
        MODEL_ANSWER,
    ),
    ("06_thinking_models", "It's sunny in Beijing today.", MODEL_ANSWER),
    ("06_thinking_models", "Moscow has snow today.", MODEL_ANSWER),
    (
        "06_thinking_models",
        "The user wants three cities, one call at a time.",
        "a thinking model's reasoning from the cassette, printed as the model wrote it",
    ),
    (
        "06_thinking_models",
        "The user asks about Beijing; call the weather tool.",
        "a thinking model's reasoning from the cassette, printed as the model wrote it",
    ),
    ("05_qwen_comparison", "It is 26.1 °C in San Francisco now", MODEL_ANSWER),
    *(
        (
            "07_qwen_today",
            snippet,
            "a parameter value as the model wrote it in the XML (the table's input)",
        )
        for snippet in ("'three'           integer", "'yes'             boolean")
    ),
    (
        "07_qwen_today",
        "Paris: sunny today, cloudy tomorrow, light rain the day after.",
        MODEL_ANSWER,
    ),
    (
        "07_qwen_today",
        "The user wants three days for Paris with hourly detail.",
        "a model's reasoning from the cassette, printed as the model wrote it",
    ),
    (
        "07_qwen_today",
        "Can only get item pairs from a mapping.",
        "Jinja's own error, raised by the official Qwen3.5 chat template",
    ),
    (
        "04_manual_parsing",
        "You are Kimi, an AI assistant created by Moonshot AI.",
        "Kimi-K2's default system prompt, rendered by its chat template",
    ),
    (
        "05_qwen_comparison",
        "What's the weather like in Beijing today? Let's check using the tool.",
        "the user turn inside the rendered chat template",
    ),
    (
        "05_qwen_comparison",
        "You are Qwen, created by Alibaba Cloud.",
        "Qwen's default system prompt, rendered by its chat template",
    ),
    (
        "05_qwen_comparison",
        "You may call one or more functions to assist with the user query.",
        "Qwen's chat template text about tools",
    ),
    (
        "05_qwen_comparison",
        "You are provided with function signatures within",
        "Qwen's chat template text about tools",
    ),
    (
        "05_qwen_comparison",
        "For each function call, return a json object with function name",
        "Qwen's chat template text about tools",
    ),
    # Lesson 09: K3 renders (llama.cpp's template sentences), the lesson's conversation, cassette
    # answers.
    *(
        ("09_kimi_k3_xtml", snippet, "Kimi K3's option messages, as the K3 render writes them")
        for snippet in (
            "guides on how much to think in your thinking channel",
            "system is invoked with `",
            "You MUST call tools in the next message.",
            "Your response must be raw JSON data without markdown code blocks",
            "The JSON data must match the following schema:",
        )
    ),
    ("09_kimi_k3_xtml", "## Return of functions.get_weather:0", "Kimi-K2's template text"),
    ("09_kimi_k3_xtml", "What's the weather like in Beijing today?", PROMPT),
    ("09_kimi_k3_xtml", "I should call get_weather.", "the reasoning of the lesson's conversation"),
    (
        "09_kimi_k3_xtml",
        "The user asks about Beijing today. I should call get_weather.",
        "a thinking model's reasoning from the cassette, printed as the model wrote it",
    ),
    ("09_kimi_k3_xtml", "It's sunny in Beijing today.", MODEL_ANSWER),
    ("09_kimi_k3_xtml", "Hello, class!", MODEL_ANSWER),
    # Lesson 12: the pre-flight's statuses are a fixed vocabulary the command prints in both
    # languages (a teacher greps for FAIL); BFCL's category names are the data set's own.
    *(
        ("12_measuring", snippet, "helpers.verify's statuses, the same in both languages")
        for snippet in ("PASS  ", "FAIL  ", "N/R   ")
    ),
    *(
        ("12_measuring", f"{category}  ", "BFCL's category names, as the data set spells them")
        for category in ("simple", "parallel", "irrelevance")
    ),
    ("10_mcp_tools", "It's snowing in Moscow today, -3 °C.", MODEL_ANSWER),
    (
        "10_mcp_tools",
        "No forecast for 'Paris'.",
        "the MCP tool's error text, written for the model",
    ),
    ("10_mcp_tools", "title is not supported in strict mode", "the replay server's 400 wording"),
)


def blank_data(line: str) -> str:
    """The line with every piece of shown-on-purpose data replaced by a space."""
    for pattern in DATA:
        line = pattern.sub(" ", line)
    return line


def _tokens(line: str) -> list[str | None]:
    """Plain English words of a line in order; None where anything else breaks a run of words."""
    tokens: list[str | None] = []
    line = line.replace("(s)", "s")  # "call(s)" is the word "calls"
    raws = [raw for cell in re.split(r"\s{2,}", line) for raw in [*cell.split(), "|"]]
    for raw in raws:
        word = raw.strip(EDGE_PUNCTUATION)
        if PLAIN_WORD.match(word) and not re.search(r"[a-z][A-Z]", word):  # CamelCase: a name
            tokens.append(word.lower())
        elif word:
            tokens.append(None)
        if raw != raw.rstrip(".;!?|") and tokens and tokens[-1] is not None:
            tokens.append(None)  # a sentence or a table cell ends here
    return tokens


def english_prose(line: str) -> str | None:
    """Why `line` (of a Russian output) reads as English prose, or None."""
    if not line.strip():
        return None
    tokens = _tokens(blank_data(line))
    run: list[str] = []
    for token in [*tokens, None]:
        if token is not None:
            run.append(token)
            continue
        if len(run) >= 3 and sum(word in COMMON for word in run) >= 2:
            return f"English words {' '.join(run)!r}"
        run = []
    if not CYRILLIC.search(line):
        words = [t for t in tokens if t is not None and t not in PROTOCOL and len(t) > 1]
        if len(words) >= 2:
            return f"a line with English words {' '.join(words)!r} and no Russian one"
    return None


SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
LOWER_WORD = re.compile(r"^[a-z]+(?:'[a-z]+)?$")
# A label: unquoted, or a Python repr in single quotes (a JSON key, in double quotes, is data).
LABEL = re.compile(r"^\s*('?)([a-z]+(?: [a-z]+){0,2})\1(?::\s|:$|\s{2,})")


def english_sentence(line: str) -> str | None:
    """Why `line` holds one English sentence among Russian ones, or None: a sentence with no
    Cyrillic and three or more lower-case English words that are neither protocol words nor names
    (capitalised words are names: Moonshot, SGLang, API)."""
    for sentence in SENTENCE_END.split(blank_data(line)):
        if CYRILLIC.search(sentence):
            continue
        words = [
            word
            for raw in sentence.split()
            for word in [raw.strip(EDGE_PUNCTUATION)]
            if LOWER_WORD.match(word) and word not in PROTOCOL and word not in NAMES
        ]
        if len(words) >= 3:
            return f"an English sentence {' '.join(words)!r}"
    return None


def english_label(line: str) -> str | None:
    """Why `line` starts with an English label (a table row's name, `label: value`), or None."""
    found = LABEL.match(line)
    if not found:
        return None
    words = [w for w in found.group(2).split() if w not in PROTOCOL and w not in NAMES]
    return f"an English label {found.group(2)!r}" if words else None


def allowed(lesson: str, line: str) -> bool:
    """The line holds data that `ALLOWED` names for this lesson."""
    return any(lesson == name and snippet in line for name, snippet, _ in ALLOWED)


def message_content_lines(text: str) -> set[int]:
    """Numbers of the lines of `text` that are message content in a `show_messages` block."""
    content, inside = set(), False
    for number, line in enumerate(text.splitlines()):
        if MESSAGE_HEADER.match(line):
            inside = True
        elif inside and line.startswith("    ") and not line.startswith("    -> "):
            content.add(number)
        elif not line.startswith("    "):
            inside = False
    return content


def language_problems(lesson: str, lang: str, text: str) -> list[str]:
    """Lines of `text` (an output of `lesson` in edition `lang`) in the wrong language."""
    problems = []
    skipped = message_content_lines(text)
    for number, line in enumerate(text.splitlines()):
        if number in skipped or allowed(lesson, line):
            continue
        if lang == "en":
            if CYRILLIC.search(line):
                problems.append(f"Cyrillic in the English edition: {line.strip()[:100]!r}")
        else:
            why = english_prose(line) or english_sentence(line) or english_label(line)
            if why:
                problems.append(f"{why} in the Russian edition: {line.strip()[:100]!r}")
    return problems


# --- the lessons' markdown ------------------------------------------------------------------------

FENCE = re.compile(r"```.*?```", re.S)
LINK = re.compile(r"\[[^\]\n]*\]\([^)\s]+\)")
LINK_TARGET = re.compile(r"\]\([^)\s]+\)")
CODE_SPAN = re.compile(r"`[^`\n]+`")
LIST_ITEM = re.compile(r"\s*(?:[-*]|\d+\.)\s")


def markdown_shape(text: str) -> tuple[int, int, int]:
    """(paragraphs, links, code spans) of a markdown cell; a fenced block counts as a paragraph."""
    text = FENCE.sub("\n\nCODE\n\n", text)
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return len(paragraphs), len(LINK.findall(text)), len(CODE_SPAN.findall(text))


def markdown_blocks(text: str) -> list[str]:
    """The prose of a markdown cell as units to read: a paragraph or a list item joined onto one
    line, a table row alone; fenced code and link targets left out."""
    text = LINK_TARGET.sub("]", FENCE.sub("\n\n", text))
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line for line in paragraph.splitlines() if line.strip()]
        if any(line.lstrip().startswith("|") for line in lines):
            units.extend(lines)
            continue
        current: list[str] = []
        for line in lines:
            if LIST_ITEM.match(line) and current:
                units.append(" ".join(current))
                current = []
            current.append(line.strip())
        if current:
            units.append(" ".join(current))
    return units


def markdown_problems(lesson: str, lang: str, text: str) -> list[str]:
    """Prose of a markdown cell in the wrong language (Russian: English prose or a sentence;
    English: Cyrillic)."""
    problems = []
    for unit in markdown_blocks(text):
        if allowed(lesson, unit):
            continue
        if lang == "en":
            if CYRILLIC.search(unit):
                problems.append(f"Cyrillic in the English prose: {unit.strip()[:100]!r}")
            continue
        why = english_sentence(unit) or (english_prose(unit) if CYRILLIC.search(unit) else None)
        if why:
            problems.append(f"{why} in the Russian prose: {unit.strip()[:100]!r}")
    return problems
