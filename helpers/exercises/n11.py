"""Self-checks for lesson 11: TODO say what the exercises practise."""

from __future__ import annotations

from typing import Any

from helpers.exercises._verdict import NotYet, exercise


@exercise
def check_messages(messages: Any) -> None:
    """Exercise 1: a conversation of one user message asking for the weather in Moscow."""
    if not isinstance(messages, list) or len(messages) != 1:
        raise NotYet("my_messages should be a list with exactly one message.",
                     "my_messages должен быть списком ровно из одного сообщения.")
    message = messages[0]
    if not isinstance(message, dict) or message.get("role") != "user":
        raise NotYet('the message is a dict with "role": "user".',
                     'сообщение — словарь с "role": "user".')
    if "moscow" not in str(message.get("content", "")).lower():
        raise NotYet("ask about Moscow in the message's content.",
                     "спросите в content сообщения о Москве (Moscow).")
