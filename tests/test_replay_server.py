"""The replay server through the real openai SDK and requests: JSON, SSE, errors, concurrency."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
import requests
from test_replay_fixtures import (
    FINAL_TEXT,
    MODEL,
    PROMPT,
    RAW_TEXT,
    ROUND_1,
    ROUND_2,
    TOOLS,
    chat_body,
    interactions,
    sse_bytes,
    stream_events,
    write_cassette,
)

from helpers.replay import CassetteError, ReplayServer


@pytest.fixture
def client(server: ReplayServer) -> Iterator[openai.OpenAI]:
    """An SDK client pointed at the replay server, as a notebook makes it."""
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="replay-needs-no-key") as sdk:
        yield sdk


def test_sdk_non_stream_answers_the_recording(client: openai.OpenAI) -> None:
    """A recorded request comes back through the SDK as a parsed ChatCompletion."""
    response = client.chat.completions.create(
        model=MODEL, messages=ROUND_1, tools=TOOLS, temperature=0.3, tool_choice="auto"
    )
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls[0].id == "get_weather:0"
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"city": "Beijing"}
    assert response.usage.total_tokens == 30


def test_sdk_stream_replays_every_chunk(client: openai.OpenAI) -> None:
    """stream=True yields exactly the recorded chunks, usage chunk included."""
    stream = client.chat.completions.create(
        model=MODEL,
        messages=ROUND_1,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c.to_dict() for c in stream]
    expected = [e["data"] for e in stream_events() if e["data"] != "[DONE]"]
    assert chunks == expected
    assert chunks[-1]["choices"] == []


def test_engine_prefix_selects_that_profile(server: ReplayServer) -> None:
    """The same request under /engines/vllm/v1 gets the vLLM recording (its call id)."""
    with openai.OpenAI(base_url=f"{server.url}/engines/vllm/v1", api_key="k") as sdk:
        response = sdk.chat.completions.create(model=MODEL, messages=ROUND_1, tools=TOOLS)
    assert response.choices[0].message.tool_calls[0].id == "functions.get_weather:0"
    assert response.choices[0].message.content is None


def test_requests_chat_and_completions(server: ReplayServer) -> None:
    """Plain `requests` gets the recorded JSON for both endpoints, with Content-Length."""
    endpoint = f"{server.url}/v1"
    chat = requests.post(
        f"{endpoint}/chat/completions",
        json={"model": MODEL, "messages": ROUND_2, "tools": TOOLS},
        timeout=10,
    )
    assert chat.status_code == 200
    assert chat.json()["choices"][0]["message"]["content"] == FINAL_TEXT
    assert int(chat.headers["Content-Length"]) == len(chat.content)
    raw = requests.post(
        f"{endpoint}/completions",
        json={"model": MODEL, "prompt": PROMPT, "max_tokens": 100, "temperature": 0},
        timeout=10,
    )
    assert raw.status_code == 200
    assert raw.json()["choices"][0]["text"] == RAW_TEXT


def test_requests_completions_stream_exact_bytes(server: ReplayServer) -> None:
    """A streamed /completions answer is the recorded events, byte for byte."""
    item = next(i for i in interactions() if i["label"] == "raw/completions-stream")
    response = requests.post(
        f"{server.url}/v1/completions", json=item["request"]["body"], stream=True, timeout=10
    )
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert response.content == sse_bytes(item["response"]["sse"])


def test_sdk_completions_stream(client: openai.OpenAI) -> None:
    """The SDK's completions.create(stream=True) reassembles the recorded raw text."""
    stream = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=100, stream=True)
    assert "".join(c.choices[0].text for c in stream) == RAW_TEXT


def test_models_lists_cassette_models(client: openai.OpenAI, server: ReplayServer) -> None:
    """GET /v1/models (and under an engine prefix) lists the models of the cassettes."""
    assert [m.id for m in client.models.list()] == [MODEL]
    listed = requests.get(f"{server.url}/engines/sglang/v1/models", timeout=10).json()
    assert [m["id"] for m in listed["data"]] == [MODEL]


def test_identical_requests_answer_identically(server: ReplayServer) -> None:
    """Replay is deterministic: the same request twice gives the same bytes."""
    body = {"model": MODEL, "messages": ROUND_1, "tools": TOOLS}
    first = requests.post(f"{server.url}/v1/chat/completions", json=body, timeout=10)
    second = requests.post(f"{server.url}/v1/chat/completions", json=body, timeout=10)
    assert first.content == second.content


def test_bad_json_is_an_openai_400(server: ReplayServer) -> None:
    """A body that is not JSON gets a 400 OpenAI-shaped error, not a traceback."""
    response = requests.post(
        f"{server.url}/v1/chat/completions",
        data=b"{not json",
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "could not parse the JSON body" in error["message"]
    assert response.headers["x-should-retry"] == "false"
    assert "Traceback" not in response.text


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/embeddings"),
        ("GET", "/v1/chat/completions"),
        ("POST", "/v1/models"),
        ("DELETE", "/v1/models"),
        ("POST", "/v2/chat/completions"),
    ],
)
def test_unknown_path_is_an_openai_404(server: ReplayServer, method: str, path: str) -> None:
    """Paths the server does not serve get OpenAI's 'Invalid URL' 404."""
    response = requests.request(method, f"{server.url}{path}", json={"model": MODEL}, timeout=10)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == f"Invalid URL ({method} {path})"


def test_non_object_body_is_400(server: ReplayServer) -> None:
    """A JSON array body is rejected with a 400."""
    response = requests.post(f"{server.url}/v1/completions", json=[1, 2], timeout=10)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "The request body must be a JSON object."


def test_mismatch_is_404_with_closest_recording_and_no_retry(
    client: openai.OpenAI, server: ReplayServer
) -> None:
    """An unrecorded request: NotFoundError at once, naming the closest recording and the field."""
    messages = [ROUND_1[0], {"role": "user", "content": "What's the weather like in Paris today?"}]
    before = len(server.requests)
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    assert len(server.requests) == before + 1  # not retried
    message = str(caught.value)
    assert message.startswith("Error code: 404 - No recorded answer matches this request")
    assert "Closest recording: 'weather/round-1' in lesson.json." in message
    assert "First difference at messages[1].content:" in message
    assert 'this request: "What\'s the weather like in Paris today?"' in message
    assert 'recording:    "What\'s the weather like in Beijing today?"' in message
    assert "LLM_MODE=live" in message and "KIMI_BASE_URL" in message and "QWEN_MODEL" in message
    assert "127.0.0.1" not in message and str(Path.cwd()) not in message
    assert caught.value.body["code"] == "no_recording"
    assert caught.value.body["param"] == "messages[1].content"


def test_mismatch_message_is_deterministic(server: ReplayServer) -> None:
    """The 404 text does not change between calls (nbval compares it in the lessons)."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    texts = {
        requests.post(f"{server.url}/v1/chat/completions", json=body, timeout=10).text
        for _ in range(3)
    }
    assert len(texts) == 1


def test_mismatch_on_model_names_it(client: openai.OpenAI) -> None:
    """A different model is reported as the first difference, with both names."""
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="kimi-k2-0905-preview", messages=ROUND_1, tools=TOOLS)
    assert "First difference at model:" in str(caught.value)
    assert '"kimi-k2-0905-preview"' in str(caught.value) and f'"{MODEL}"' in str(caught.value)


def test_mismatch_long_values_are_shortened(client: openai.OpenAI) -> None:
    """Long differing texts are cut to about 80 characters, around the difference."""
    long_text = "word " * 200
    with pytest.raises(openai.NotFoundError) as caught:
        client.completions.create(model=MODEL, prompt=PROMPT + long_text, max_tokens=100)
    lines = str(caught.value).splitlines()
    request_line = next(line for line in lines if line.startswith("  this request:"))
    assert "First difference at prompt:" in str(caught.value)
    assert len(request_line) < 110
    assert request_line.rstrip().endswith("...")


def test_no_recordings_loaded(tmp_path: Path) -> None:
    """An empty folder still answers, with a 404 that says nothing is loaded."""
    with ReplayServer(tmp_path) as empty:
        response = requests.post(
            f"{empty.url}/v1/chat/completions",
            json={"model": MODEL, "messages": ROUND_1},
            timeout=10,
        )
    assert response.status_code == 404
    assert "No recordings are loaded at all." in response.json()["error"]["message"]


def _twin() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A recorded exchange and another answer to the same canonical request."""
    items = interactions()[:1]
    twin = json.loads(json.dumps(items[0]))
    twin["label"] = "weather/twin"
    twin["request"]["body"]["temperature"] = 0.9  # ignored: same canonical request
    twin["response"]["body"] = chat_body({"role": "assistant", "content": "other"}, "stop")
    return items, twin


def test_duplicate_canonical_requests_in_one_cassette_fail_to_load(tmp_path: Path) -> None:
    """Two different answers to the same canonical request in ONE cassette: loading names both."""
    items, twin = _twin()
    write_cassette(tmp_path, "a", [*items, twin])
    with pytest.raises(CassetteError) as caught:
        ReplayServer(tmp_path)
    assert "'weather/round-1' in a.json" in str(caught.value)
    assert "'weather/twin' in a.json" in str(caught.value)


def test_two_lessons_answering_the_same_request_differently_both_replay(tmp_path: Path) -> None:
    """Real captures: lessons 01 and 02 send the same first request. The asking lesson's cassette
    answers (`/lessons/<name>/v1`); without a lesson the last loaded one does."""
    items, twin = _twin()
    write_cassette(tmp_path, "01_first_call", items)
    write_cassette(tmp_path, "02_sync_loop", [twin])
    body = items[0]["request"]["body"]
    with ReplayServer(tmp_path) as server:
        assert server.shadowed == 1
        answers = {}
        for prefix in ("/lessons/01_first_call", "/lessons/02_sync_loop", "", "/lessons/03_x"):
            client = openai.OpenAI(base_url=f"{server.url}{prefix}/v1", api_key="k", max_retries=0)
            answers[prefix] = client.chat.completions.create(**body).choices[0].message.content
    assert answers["/lessons/02_sync_loop"] == answers[""] == answers["/lessons/03_x"] == "other"
    assert answers["/lessons/01_first_call"] != "other"


def test_same_exchange_in_two_files_is_allowed(tmp_path: Path) -> None:
    """The same request with the same answer in two lessons' cassettes loads once."""
    write_cassette(tmp_path, "a", interactions()[:1])
    write_cassette(tmp_path, "b", interactions()[:1])
    server = ReplayServer(tmp_path)
    assert len(server.interactions) == 1
    assert len(server.files) == 2


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.168.1.10", "example.com"])
def test_refuses_non_loopback_hosts(tmp_path: Path, host: str) -> None:
    """The server can only bind 127.0.0.1."""
    with pytest.raises(ValueError, match="127.0.0.1"):
        ReplayServer(tmp_path, host=host)


def test_binds_loopback_only(tmp_path: Path) -> None:
    """A started server's socket is bound to 127.0.0.1."""
    with ReplayServer(tmp_path) as running:
        assert running._httpd is not None
        assert running._httpd.server_address[0] == "127.0.0.1"
        assert running.url.startswith("http://127.0.0.1:")


def test_stop_frees_the_port(tmp_path: Path) -> None:
    """After stop() nothing listens on the port any more."""
    running = ReplayServer(tmp_path).start()
    port = int(running.url.rsplit(":", 1)[1])
    running.stop()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_restart_on_the_same_port_works_right_after_stop(server: ReplayServer) -> None:
    """`python -m helpers.replay serve --port N`, stopped and started again: the server closed
    its streamed connections itself, so they sit in TIME_WAIT, which blocked the port for a
    minute ("Address already in use") unless the socket allows address reuse."""
    folder = server.files[0].parent
    first = ReplayServer(folder).start()
    port = int(first.url.rsplit(":", 1)[1])
    item = next(i for i in interactions() if "sse" in i["response"])
    for _ in range(3):  # the server ends each stream by closing the connection
        answer = requests.post(
            f"{first.url}{item['request']['path']}", json=item["request"]["body"], timeout=10
        )
        assert answer.status_code == 200 and answer.content
    first.stop()
    with ReplayServer(folder, port=port) as again:
        assert again.url == f"http://127.0.0.1:{port}"


def _paced_cassette(folder: Path, delay_ms: int) -> dict:
    """A cassette with one stream of 4 events, each after `delay_ms`."""
    item = interactions()[2]
    events = stream_events(delay_ms)[:3] + [{"data": "[DONE]", "delay_ms": delay_ms}]
    item["response"]["sse"] = events
    write_cassette(folder, "paced", [item])
    return item


def _timed_stream(server: ReplayServer, body: dict) -> tuple[float, bytes]:
    """Seconds to read a whole stream, and its bytes."""
    started = time.monotonic()
    response = requests.post(f"{server.url}/v1/chat/completions", json=body, timeout=20)
    return time.monotonic() - started, response.content


def test_pace_replays_recorded_delays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With pace, a stream takes at least the sum of its delays; without, it never waits."""
    item = _paced_cassette(tmp_path, 60)
    body = item["request"]["body"]
    with ReplayServer(tmp_path, pace=True) as paced:
        elapsed, content = _timed_stream(paced, body)
    assert elapsed >= 0.24  # 4 x 60 ms; a lower bound: a busy machine only makes it slower
    assert content == sse_bytes(item["response"]["sse"])
    waits: list[float] = []
    monkeypatch.setattr("helpers.replay.server.time.sleep", waits.append)
    with ReplayServer(tmp_path) as unpaced:
        _, content = _timed_stream(unpaced, body)
    assert waits == []
    assert content == sse_bytes(item["response"]["sse"])


def test_fifty_concurrent_sdk_streams_are_exact(tmp_path: Path) -> None:
    """50 SDK clients streaming at once (paced, so they overlap) all get the exact chunks."""
    item = interactions()[2]
    item["response"]["sse"] = stream_events(delay_ms=20)
    write_cassette(tmp_path, "many", [item])
    body = item["request"]["body"]
    expected = [e["data"] for e in item["response"]["sse"] if e["data"] != "[DONE]"]
    clients = 50
    barrier = threading.Barrier(clients)
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def one(sdk: openai.OpenAI) -> list[dict]:
        barrier.wait(timeout=20)
        stream = sdk.chat.completions.create(**body)
        got = []
        for part in stream:
            if not got:
                with lock:
                    active["now"] += 1
                    active["max"] = max(active["max"], active["now"])
            got.append(part.to_dict())
        with lock:
            active["now"] -= 1
        return got

    with ReplayServer(tmp_path, pace=True) as running:
        with openai.OpenAI(base_url=f"{running.url}/v1", api_key="k", max_retries=0) as sdk:
            with ThreadPoolExecutor(max_workers=clients) as pool:
                results = list(pool.map(lambda _: one(sdk), range(clients)))
        assert len(running.requests) == clients
    assert all(result == expected for result in results)
    assert active["max"] > 1  # the streams really overlapped


def test_fifty_concurrent_raw_streams_exact_bytes(server: ReplayServer) -> None:
    """50 concurrent raw HTTP streams get byte-identical recorded events."""
    item = interactions()[2]
    expected = sse_bytes(item["response"]["sse"])

    def one(_: int) -> bytes:
        response = requests.post(
            f"{server.url}/v1/chat/completions", json=item["request"]["body"], timeout=20
        )
        return response.content

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(one, range(50)))
    assert all(result == expected for result in results)


def test_keep_alive_client_survives_mixed_calls(client: openai.OpenAI) -> None:
    """One keep-alive SDK client: JSON, stream, error, JSON again, all answered correctly."""
    assert client.chat.completions.create(model=MODEL, messages=ROUND_2, tools=TOOLS)
    stream = client.chat.completions.create(
        model=MODEL,
        messages=ROUND_1,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    assert len(list(stream)) == len(stream_events()) - 1
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "?"}])
    again = client.chat.completions.create(model=MODEL, messages=ROUND_2, tools=TOOLS)
    assert again.choices[0].message.content == FINAL_TEXT


def test_client_disconnect_mid_stream_does_not_break_server(tmp_path: Path) -> None:
    """A client that hangs up during a paced stream leaves the server serving others."""
    item = _paced_cassette(tmp_path, 30)
    payload = json.dumps(item["request"]["body"]).encode()
    with ReplayServer(tmp_path, pace=True) as running:
        port = int(running.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            raw.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                + f"\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
            assert raw.recv(100).startswith(b"HTTP/1.1 200")
        _, content = _timed_stream(running, item["request"]["body"])
        assert content == sse_bytes(item["response"]["sse"])


def test_repr_has_no_port(server: ReplayServer) -> None:
    """repr(server) is deterministic."""
    assert repr(server) == "ReplayServer(6 interactions from 1 cassettes, pace=False)"


# ---------------------------------------------------------------------------------------------
# Hostile or odd HTTP: every answer is OpenAI-shaped JSON, the connection stays in step
# ---------------------------------------------------------------------------------------------


def _exchange(
    server: ReplayServer, data: bytes, sock: socket.socket | None = None, answers: int = 1
) -> bytes:
    """Send raw bytes and read until `answers` whole HTTP answers came (by Content-Length), the
    server closes, or it goes quiet for a second."""
    conn = sock or socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), 5)
    conn.sendall(data)
    conn.settimeout(1.0)
    out = b""
    head_request = data.startswith(b"HEAD ")
    try:
        while _complete_answers(out, head_request) < answers and (chunk := conn.recv(65536)):
            out += chunk
    except TimeoutError:
        pass
    if sock is None:
        conn.close()
    return out


def _complete_answers(data: bytes, head_request: bool = False) -> int:
    """How many whole HTTP answers with a Content-Length `data` holds (a HEAD answer: no body)."""
    count = 0
    while (end := data.find(b"\r\n\r\n")) >= 0:
        length = re.search(rb"(?im)^content-length:\s*(\d+)", data[:end])
        if length is None:
            return count
        size = 0 if head_request else int(length.group(1))
        if len(data) < end + 4 + size:
            return count
        data = data[end + 4 + size :]
        count += 1
    return count


def _post_raw(body: bytes) -> bytes:
    """A raw chat POST that asks the server to close afterwards."""
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    ) + body


def _error_of(answer: bytes) -> tuple[int, dict[str, Any]]:
    """Status and JSON `error` object of one raw HTTP answer (fails on anything else)."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"application/json" in head, head
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return status, error


def test_lone_surrogate_gets_a_400(server: ReplayServer) -> None:
    messages = [ROUND_1[0], {"role": "user", "content": "x\ud800y"}]
    body = json.dumps({"model": MODEL, "messages": messages, "tools": TOOLS}).encode()
    status, error = _error_of(_exchange(server, _post_raw(body)))
    assert status == 400 and "could not parse the JSON body" in error["message"]


@pytest.mark.parametrize("depth", [500, 990, 5000])
def test_deeply_nested_json_gets_a_400_not_a_recursion_error(
    server: ReplayServer, depth: int
) -> None:
    nested = "[" * depth + "]" * depth
    for field in ("messages", "metadata"):
        messages = nested if field == "messages" else '[{"role": "user", "content": "hi"}]'
        extra = f', "metadata": {nested}' if field == "metadata" else ""
        body = f'{{"model": "{MODEL}", "messages": {messages}{extra}}}'.encode()
        status, error = _error_of(_exchange(server, _post_raw(body)))
        assert status == 400, (field, error)


@pytest.mark.parametrize("size_line", [b"2", b"zz", b"-5", b"1" * 40])
def test_a_chunked_body_gets_a_clear_400(server: ReplayServer, size_line: bytes) -> None:
    """Its clients always send Content-Length; a chunked body is refused, never misread."""
    data = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + size_line
        + b"\r\nab\r\n0\r\n\r\n"
    )
    answer = _exchange(server, data)
    status, error = _error_of(answer)
    assert status == 400 and "Content-Length" in error["message"]
    assert answer.count(b"HTTP/1.1") == 1  # the rest of the body is not read as a request


def test_get_body_is_read_and_the_kept_alive_connection_stays_in_step(server: ReplayServer) -> None:
    data = (
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    answer = _exchange(server, data, answers=2)
    assert answer.count(b"HTTP/1.1 200 OK") == 2, answer


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS", "TRACE", "CONNECT", "BREW"])
def test_other_methods_get_openai_json_not_html(server: ReplayServer, method: str) -> None:
    answer = _exchange(server, f"{method} /v1/models HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert b"<html" not in answer.lower()
    head = answer.partition(b"\r\n\r\n")[0]
    status = int(head.split(b" ", 2)[1])
    assert 400 <= status < 500
    if method != "HEAD":  # a HEAD answer has headers only
        assert _error_of(answer)[1]["message"].startswith(f"Invalid URL ({method} /v1/models)")


def test_malformed_request_line_gets_openai_json(server: ReplayServer) -> None:
    status, _ = _error_of(_exchange(server, b"GET /v1/models HTTP/9.9 extra\r\n\r\n"))
    assert status == 400


def test_stop_closes_kept_alive_connections(tmp_path: Path) -> None:
    write_cassette(tmp_path, "lesson", interactions())
    running = ReplayServer(tmp_path).start()
    port = int(running.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        first = _exchange(running, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", conn)
        assert first.startswith(b"HTTP/1.1 200")
        running.stop()
        try:
            after = _exchange(running, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", conn)
        except OSError:
            after = b""
    assert after == b""


def test_request_log_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_cassette(tmp_path, "lesson", interactions())
    monkeypatch.setattr(ReplayServer, "REQUEST_LOG_SIZE", 3)
    with ReplayServer(tmp_path) as running:
        for _ in range(5):
            requests.get(f"{running.url}/v1/models", timeout=5)
        assert len(running.requests) == 3
        assert running.request_count == 5


def test_listen_backlog_takes_a_burst() -> None:
    from helpers.replay.server import QuietThreadingServer

    assert QuietThreadingServer.request_queue_size >= 1024


def test_mismatch_tells_an_author_which_scenario_file_and_command(tmp_path: Path) -> None:
    """Against the shipped cassettes the 404 names the lesson's scenario module and the command
    that re-synthesizes it; against a cassette with no scenario module, how to re-record it."""
    from helpers.paths import RECORDINGS_DIR

    body = {
        "model": "moonshotai/Kimi-K2-Instruct",
        "messages": [{"role": "user", "content": "Say 'Ready.' and nothing else, please!"}],
    }
    with ReplayServer(RECORDINGS_DIR / "00_start.json") as shipped:
        text = requests.post(f"{shipped.url}/v1/chat/completions", json=body, timeout=10).text
    assert "helpers/replay/scenarios/n00_start.py" in text
    assert "python -m helpers.replay synthesize" in text
    write_cassette(tmp_path, "mine", interactions())
    with ReplayServer(tmp_path) as recorded:
        text = requests.post(f"{recorded.url}/v1/chat/completions", json=body, timeout=10).text
    assert "mine.json was recorded, not synthesized" in text and "LLM_MODE=record" in text


# --- issue 33: a Content-Length that is not a whole number, and slow clients -------------------


@pytest.mark.parametrize("length", [b"-5", b"-0", b"+5", b"zz", b"5.0", b"0x10", b"\xd9\xa5"])
def test_a_negative_or_non_numeric_content_length_is_a_400_and_the_connection_closes(
    server: ReplayServer, length: bytes
) -> None:
    hidden = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"  # must not be read as a second request
    data = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + length + b"\r\n\r\n" + hidden
    )
    conn = socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), 5)
    with conn:
        answer = _exchange(server, data, sock=conn, answers=2)
        status, error = _error_of(answer)
        assert status == 400 and "Content-Length" in error["message"]
        assert answer.count(b"HTTP/1.1 ") == 1, answer
        conn.settimeout(5)
        assert conn.recv(10) == b""  # closed by the server


def _handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def test_slow_clients_hold_a_bounded_number_of_threads_for_a_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 clients sending a byte every 0.1 s: at most `max_connections` threads serve them, each
    is cut off at `request_deadline`, and a well-behaved client is answered afterwards."""
    from helpers.replay.server import JsonHandler, QuietThreadingServer

    monkeypatch.setattr(QuietThreadingServer, "max_connections", 4, raising=False)
    monkeypatch.setattr(JsonHandler, "request_deadline", 0.5, raising=False)
    write_cassette(tmp_path, "lesson", interactions())
    with ReplayServer(tmp_path) as running:
        address = ("127.0.0.1", int(running.url.rsplit(":", 1)[1]))
        slow = [socket.create_connection(address, timeout=5) for _ in range(20)]
        peak, closed = 0, set()
        # One byte a step: the whole request would take 4,600 steps, so a connection closed
        # within the loop was cut off by the server's deadline, whatever the machine's speed
        # (no wall-clock assertion: under load the steps stretch, the count does not).
        request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" * 100
        for step in range(400):  # 40 s at most on a quiet machine
            peak = max(peak, _handler_threads())
            for i, conn in enumerate(slow):
                if i in closed:
                    continue
                try:
                    conn.sendall(request[step : step + 1])
                except OSError:  # reset by the server
                    closed.add(i)
            if len(closed) == len(slow):
                break
            time.sleep(0.1)
        answer = requests.get(f"{running.url}/v1/models", timeout=10)
        for conn in slow:
            conn.close()
    assert len(closed) == 20, f"{20 - len(closed)} slow clients were never cut off"
    assert peak <= 4, f"{peak} handler threads at once, the limit is 4"
    assert answer.status_code == 200
