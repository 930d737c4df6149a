"""Lesson 01: one request with the weather tool; the model answers with one call."""

from helpers.replay.scenarios import Scenario
from helpers.replay.scenarios.common import ONE_CALL_TURNS, guide_scenario

NOTEBOOK = "01_tools_schema"

SCENARIOS: list[Scenario] = [
    # Where the arguments come from: the model writes them as JSON text in the call.
    guide_scenario("weather", ONE_CALL_TURNS),
]
