"""Strict stand-ins for today's live endpoints: the Moonshot platform with `kimi-k2.6`, and vLLM
serving Qwen3.5 (`--tool-call-parser qwen3_coder --reasoning-parser qwen3`).

A stand-in checks every request by the rules the real service documents, and answers the ones it
accepts from the series' cassettes (served by a replay server it forwards to):

- Moonshot (`kimi-...` ids; `kimi-k3` for lesson 09, with K3's rules: "required" allowed but not
  without tools, a named choice ignored, reasoning kept on every assistant message):
  `helpers.replay.validation.check_chat_request`: locked `temperature`,
  `top_p` and `n` (kimi-k2.6 / k2.5), strict tool schemas in Moonshot's subset, tool names,
  at most 128 functions, and with thinking on: a forced `tool_choice` (named or `"required"`) is
  refused, and so is an assistant tool-call message sent back without its `reasoning_content`.
- vLLM + Qwen3.5: the official chat template's own errors (a system message that is not first, no
  user message) come back as vLLM's 400s.

With thinking on, an answer recorded for an instruct model gets a reasoning part, as the thinking
model would send it (`reasoning_content` on Moonshot, `reasoning` on vLLM >= 0.17), so a client
that drops it meets the 400 on its next round. What a stand-in cannot show: how the real model
answers (its text, ids and chunking differ).
"""

from __future__ import annotations

import copy
import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helpers.catalog import MODEL_NAMES
from helpers.replay.profiles import PROFILES
from helpers.replay.validation import (
    ApiError,
    check_chat_request,
    is_moonshot_model,
    thinking_enabled,
)

MOONSHOT_MODEL = "kimi-k2.6"
K3_MODEL = PROFILES["moonshot_k3"].model_name or "kimi-k3"  # lesson 09: K3's own platform rules
QWEN35_MODEL = PROFILES["vllm_qwen3_coder"].model_name or "Qwen/Qwen3.5-4B"
REASONING = "The stand-in's reasoning: decide whether a tool is needed."
# Where the cassettes answer each live model: (replay path, model name it was recorded with),
# tried in order; the first that is not a 404 answers.
CANDIDATES = {
    MOONSHOT_MODEL: [
        ("/engines/moonshot_thinking/v1", MOONSHOT_MODEL),
        ("/v1", MODEL_NAMES["kimi"]),
    ],
    K3_MODEL: [("/engines/moonshot_k3/v1", K3_MODEL)],
    QWEN35_MODEL: [
        ("/engines/vllm_qwen3_coder/v1", QWEN35_MODEL),
        ("/v1", MODEL_NAMES["qwen"]),
    ],
}
VLLM_NO_USER = "No user query found in messages."
# Moonshot's API reference documents chat completions, not the raw `/v1/completions` of
# self-hosted engines (our reading of its docs; the platform's exact answer is not known).
NO_RAW_COMPLETIONS = "raw /v1/completions is not part of the Moonshot API: use a self-hosted engine"
VLLM_SYSTEM_FIRST = "System message must be at the beginning."


def check_qwen35_vllm(body: dict[str, Any]) -> None:
    """The errors the official Qwen3.5 template raises, as vLLM returns them (400)."""
    messages = body.get("messages") or []
    roles = [m.get("role") for m in messages if isinstance(m, dict)]
    if "system" in roles[1:]:
        raise ApiError(400, VLLM_SYSTEM_FIRST, type="BadRequestError")
    if "user" not in roles:
        raise ApiError(400, VLLM_NO_USER, type="BadRequestError")


def qwen_thinks(body: dict[str, Any]) -> bool:
    """Qwen3.5 thinks unless `chat_template_kwargs.enable_thinking` is false."""
    kwargs = body.get("chat_template_kwargs")
    return not (isinstance(kwargs, dict) and kwargs.get("enable_thinking") is False)


class StrictStandIn:
    """A loopback server that checks requests strictly and answers from a replay server."""

    def __init__(self, replay_root: str) -> None:
        """`replay_root`: the replay server's URL without `/v1`."""
        self.replay_root = replay_root.rstrip("/")
        self.requests: list[dict[str, Any]] = []  # every POST body received, in order
        self.refused: list[str] = []  # the messages of the 400s it answered
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"owner": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL a client uses (with `/v1`)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> StrictStandIn:
        """Serve in a background thread."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        """Status, raw body and content type for one POST."""
        with self._lock:
            self.requests.append(copy.deepcopy(body))
        model = body.get("model")
        if model not in CANDIDATES:
            known = ", ".join(CANDIDATES)
            raise ApiError(404, f"The model `{model}` does not exist (this stand-in: {known})")
        endpoint = path.split("/v1/", 1)[1]
        if endpoint != "chat/completions" and is_moonshot_model(model):
            raise ApiError(404, NO_RAW_COMPLETIONS)
        if endpoint != "chat/completions":  # vLLM's raw completions: no chat rules to check
            thinking, field = False, ""
        elif is_moonshot_model(model):
            check_chat_request(body)
            thinking, field = thinking_enabled(body), "reasoning_content"
        else:
            check_qwen35_vllm(body)
            thinking, field = qwen_thinks(body), "reasoning"
        for prefix, recorded_model in CANDIDATES[model]:
            forwarded = body  # recorded for this very model: as it is
            if recorded_model != model:
                forwarded = self.forwarded_body(body, recorded_model, thinking)
            status, raw, kind = self.post(f"{prefix}/{endpoint}", forwarded)
            if status != 404:
                break
        if status != 200:
            return status, raw, kind
        inject = thinking and prefix == "/v1"
        return status, self.rewrite(raw, kind, model, field if inject else None), kind

    @staticmethod
    def forwarded_body(body: dict[str, Any], model: str, strip_reasoning: bool) -> dict[str, Any]:
        """The request as the cassettes recorded it: the recorded model, no thinking switch, and
        (for an instruct recording) without the reasoning this stand-in added to its answers."""
        out = {k: v for k, v in body.items() if k not in ("thinking", "chat_template_kwargs")}
        out["model"] = model
        if strip_reasoning:
            out["messages"] = [
                {k: v for k, v in m.items() if k not in ("reasoning_content", "reasoning")}
                if isinstance(m, dict)
                else m
                for m in body.get("messages") or []
            ]
        return out

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str]:
        """POST to the replay server; status, body and content type (errors included)."""
        request = urllib.request.Request(
            self.replay_root + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, reply.read(), reply.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            return error.code, error.read(), error.headers.get("Content-Type", "")
        except urllib.error.URLError as error:  # the replay server is gone: say so
            message = f"the stand-in's replay server did not answer: {error.reason}"
            return 502, json.dumps(ApiError(502, message).body()).encode(), ""

    @staticmethod
    def rewrite(raw: bytes, kind: str, model: str, reasoning_field: str | None) -> bytes:
        """The answer as the live model sends it: its model name, plus a reasoning part."""
        if "text/event-stream" not in kind:
            data = json.loads(raw)
            data["model"] = model
            if reasoning_field:
                for choice in data.get("choices", []):
                    choice.setdefault("message", {})[reasoning_field] = REASONING
            return json.dumps(data).encode()
        events, added = [], not reasoning_field
        for block in raw.decode().split("\n\n"):
            if not block.startswith("data: "):
                continue
            text = block[len("data: ") :]
            if text == "[DONE]":
                events.append(text)
                continue
            chunk = json.loads(text)
            chunk["model"] = model
            if not added and chunk.get("choices"):
                chunk["choices"][0].setdefault("delta", {})[reasoning_field] = REASONING
                added = True
            events.append(json.dumps(chunk))
        return "".join(f"data: {e}\n\n" for e in events).encode()


class _Handler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions (and /v1/completions), GET /v1/models."""

    owner: StrictStandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """Quiet: tests read `owner.requests` instead."""

    def send(self, status: int, raw: bytes, kind: str = "application/json") -> None:
        """One complete answer."""
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        """The models this stand-in serves."""
        data = [{"id": name, "object": "model", "owned_by": "stand-in"} for name in CANDIDATES]
        self.send(200, json.dumps({"object": "list", "data": data}).encode())

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        """Check, forward, rewrite."""
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            status, raw, kind = self.owner.answer(self.path, body)
        except ApiError as error:
            with self.owner._lock:
                self.owner.refused.append(error.message)
            status, raw, kind = error.status, json.dumps(error.body()).encode(), ""
        self.send(status, raw, kind)
