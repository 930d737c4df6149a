"""Lesson 11: Tool results are untrusted input."""

from nbbuild import Lesson, code, md

LESSON = Lesson("11_untrusted_results", [
    md("""
# Tool results are untrusted input

Goal: TODO one line: what the student can do after this lesson.
""", """
# Результаты инструментов — недоверенные данные

Цель: TODO одной строкой: что студент сумеет после урока.
"""),
    md("""
## Setup

In replay mode the model's answers come from cassettes synthesized from the documented formats
(not captured from a real service); `LLM_MODE=live` talks to a real model.
""", """
## Подготовка

В режиме воспроизведения (replay) ответы модели берутся из кассет (cassettes), синтезированных по
документированным форматам (это не записи ответов настоящего сервиса); `LLM_MODE=live` подключает
настоящую модель.
"""),
    code('''
import json

from openai import OpenAI
from helpers import connect, set_language

set_language("en")  # the language of the helpers' messages
conn = connect("kimi")
client = OpenAI(base_url=conn.endpoint, api_key=conn.api_key)
model_name = conn.model_name
conn
'''),
    md("""
## 1. The tool

The guide's weather tool, as in the earlier lessons.
""", """
## 1. Инструмент

Инструмент погоды из руководства, как в прошлых уроках.
"""),
    code('''
WEATHER = {"Beijing": "Sunny", "Shanghai": "Light rain", "Moscow": "Snow"}


def get_weather(city: str) -> dict:
    """Get weather information. Call this tool when the user needs to get weather information

    Args:
        city: City name
    """
    return {"city": city, "weather": WEATHER.get(city, "unknown")}
'''),
    code('''
tools = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get weather information. "
                       "Call this tool when the user needs to get weather information",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
    },
}]
tool_map = {"get_weather": get_weather}
'''),
    md("""
## 2. One request

TODO: what this request shows.
""", """
## 2. Один запрос

TODO: что показывает этот запрос.
"""),
    code('''
messages = [{"role": "user", "content":
             "What's the weather like in Beijing today? Let's check using the tool."}]
completion = client.chat.completions.create(
    model=model_name, messages=messages, tools=tools, temperature=0.3, tool_choice="auto"
)
choice = completion.choices[0]
print("finish_reason:", choice.finish_reason)
print("arguments:", choice.message.tool_calls[0].function.arguments)
'''),
    md("""
## Summary

- TODO: what the student learned, in two or three points.
""", """
## Итоги

- TODO: чему научился студент, в двух-трёх пунктах.
"""),
    md("""
## Exercises

**1.** Write `my_messages`: a conversation of one user message that asks for the weather in
Moscow.
""", """
## Упражнения

**1.** Напишите `my_messages`: диалог из одного сообщения пользователя с вопросом о погоде в
Москве.
"""),
    code('''
my_messages = []  # your conversation here
''', ru={"# your conversation here": "# ваш диалог здесь"}),
    code('''
from helpers.exercises import n11

n11.check_messages(my_messages)
'''),
    code('''
my_messages = [{"role": "user", "content": "What's the weather in Moscow?"}]
''', hidden=True),
    code('''
n11.check_messages(my_messages)
''', hidden=True),
    md("""
That is the end of the series. Back to the start: [00 Start here: how an LLM calls tools](00_start.ipynb)
""", """
Это конец серии. Вернуться к началу: [00 С чего начать: как LLM вызывает инструменты](00_start.ipynb)
"""),
])
