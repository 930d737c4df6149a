"""Lesson 09: Kimi K3 over the API. The model writes XTML; these scenarios record what the
Moonshot platform (`kimi-k3`) and vLLM's `kimi_k3` parsers make of it: reasoning always on and
sent back, a named `tool_choice` ignored, each call streamed whole. (The raw XTML part of the
lesson is rendered and parsed offline: it sends no request.)

The cassette is synthesized, not captured: the platform's rules come from Kimi-Vendor-Verifier's
K3 tests and Moonshot's platform docs, vLLM's from its `kimi_k3` parser (whole calls, invented
ids); no K3 service was called. What is unconfirmed is named in the profiles' summaries."""

from helpers.replay.scenarios import Scenario, Turn
from helpers.replay.scenarios.common import NAMED, guide_scenario, user, weather_calls

NOTEBOOK = "09_kimi_k3_xtml"

K3_EFFORT = "high"
"""The lesson's top-level `reasoning_effort` (Moonshot's documented field): low, high or max."""

WEATHER_K3_TURNS = [
    weather_calls(
        "Beijing", reasoning="The user asks about Beijing today. I should call get_weather."
    ),
    Turn(
        content="It's sunny in Beijing today.",
        reasoning="The tool says Beijing is sunny. Answer in one sentence.",
    ),
]

SCENARIOS: list[Scenario] = [
    # The guide's request on kimi-k3: reasoning_content in each reply, sent back in round 2.
    guide_scenario(
        "weather-k3",
        WEATHER_K3_TURNS,
        engine="moonshot_k3",
        request_extra={"tool_choice": "auto", "reasoning_effort": K3_EFFORT},
    ),
    # A named tool_choice: accepted and ignored, so the model answers a greeting with text.
    guide_scenario(
        "named-choice-ignored",
        [Turn(content="Hello, class!", reasoning="A greeting: no tool is needed.")],
        engine="moonshot_k3",
        messages=user("Say hello to the class in one short sentence."),
        request_extra={"tool_choice": NAMED, "reasoning_effort": K3_EFFORT},
    ),
    # vLLM's kimi_k3 parsers, streamed: reasoning in `reasoning`, the call in one delta with an
    # id the server invented. The lesson stops after this request.
    guide_scenario(
        "weather-stream",
        WEATHER_K3_TURNS[:1],
        engine="vllm_kimi_k3",
        stream=True,
        request_extra={"tool_choice": "auto"},
    ),
]
