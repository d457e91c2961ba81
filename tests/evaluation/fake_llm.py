"""A deterministic LLM for the answer-and-judge arm: a real HTTP server on 127.0.0.1 speaking
OpenAI's /v1/chat/completions wire format.

- An answer request replies with the memory excerpts it was given, verbatim (so an answer
  holds the gold text exactly when the arm's context did).
- A judge request (its prompt has the gold and generated answers) replies with one sentence
  and ``{"label": "CORRECT"}`` when the generated answer contains the gold text
  (case-insensitive), else ``{"label": "WRONG"}``.
- ``usage`` counts words: prompt_tokens = words of every message, completion_tokens = words
  of the reply; every request and its usage are recorded.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..providers.fakes import free_port

_JUDGED = re.compile(r"Gold answer: (.*?)\nGenerated answer: (.*)\n\nWrite one", re.DOTALL)
_EXCERPTS = re.compile(r"Memory excerpts:\n(.*)\n\nQuestion: ", re.DOTALL)


@dataclass
class Call:
    model: str
    body: dict[str, Any]
    headers: dict[str, str]
    reply: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class FakeLlm:
    answer_model: str
    judge_model: str
    calls: list[Call] = field(default_factory=list)
    url: str = ""

    def reply_to(self, model: str, messages: list[dict[str, Any]]) -> str:
        if model not in (self.answer_model, self.judge_model):
            return f"unknown model {model}"
        last = str(messages[-1]["content"])
        judged = _JUDGED.search(last)
        if judged is not None:  # a judge prompt (the judge may be the answer model)
            gold, generated = judged.group(1).strip(), judged.group(2)
            if gold.lower() in generated.lower():
                return 'The generated answer names the gold one. {"label": "CORRECT"}'
            return 'The generated answer misses the gold one. {"label": "WRONG"}'
        excerpts = _EXCERPTS.search(last)
        return excerpts.group(1) if excerpts else "I do not know."

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        model = str(body.get("model"))
        messages = body["messages"]
        reply = self.reply_to(model, messages)
        prompt = sum(len(str(m["content"]).split()) for m in messages)
        completion = len(reply.split())
        self.calls.append(Call(model, body, dict(request.headers), reply, prompt, completion))
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.calls)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )


@contextmanager
def running_fake_llm(answer_model: str, judge_model: str) -> Iterator[FakeLlm]:
    """The fake served by uvicorn on a loopback port in a thread; ``url`` ends in /v1."""
    fake = FakeLlm(answer_model, judge_model)
    app = Starlette(routes=[Route("/v1/chat/completions", fake.chat, methods=["POST"])])
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="fake-llm")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake LLM did not start")
        time.sleep(0.01)
    fake.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=10)
