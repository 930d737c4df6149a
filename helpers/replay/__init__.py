"""Replay, live and record modes: a loopback OpenAI-compatible server answering from cassettes.

Importing this package starts nothing; `connect()` starts the replay server on first use.
"""

from helpers.replay.cassette import (
    Cassette,
    CassetteError,
    Interaction,
    dump_cassette,
    load_cassette,
    load_cassettes,
    save_cassette,
    validate_cassette,
)
from helpers.replay.matching import canonical_request, first_difference, request_key
from helpers.replay.modes import (
    REPLAY_API_KEY,
    REPLAY_MODELS,
    Connection,
    LiveSettingsError,
    connect,
    current_mode,
    stop_servers,
)
from helpers.replay.record import RecordProxy
from helpers.replay.server import ReplayServer
from helpers.replay.validation import ApiError

__all__ = [
    "REPLAY_API_KEY",
    "REPLAY_MODELS",
    "ApiError",
    "Cassette",
    "CassetteError",
    "Connection",
    "Interaction",
    "LiveSettingsError",
    "RecordProxy",
    "ReplayServer",
    "canonical_request",
    "connect",
    "current_mode",
    "dump_cassette",
    "first_difference",
    "load_cassette",
    "load_cassettes",
    "request_key",
    "save_cassette",
    "stop_servers",
    "validate_cassette",
]
