"""``nmafc chat``: a terminal conversation through the whole pipeline (recall, inject,
upstream LLM, remember), with commands to look inside the memory as it grows."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, TextIO

from nmafc.core.chat import StreamedReply, exchange, inject, memory_preamble
from nmafc.embedding.base import Embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import NmafcError, ProviderNotConfigured
from nmafc.memory import SyncMemory
from nmafc.providers import ChatProvider, create_provider
from nmafc.settings import Settings

HELP = """Commands:
  /stats         counts for this conversation
  /memory        the memories it holds now
  /events [N]    the last N events (default 10)
  /rollback N    undo everything after turn N
  /quit          leave (or Ctrl-D)"""
HISTORY_MESSAGES = 20  # recent turns sent along; older ones come back through recall


class ChatSession:
    """One REPL: reads lines, answers commands, chats with memory."""

    def __init__(
        self, memory: SyncMemory, provider: ChatProvider, stdin: TextIO, stdout: TextIO
    ) -> None:
        self.memory = memory
        self.provider = provider
        self.stdin = stdin
        self.stdout = stdout
        self.history: list[dict[str, Any]] = []
        self.commands: dict[str, Callable[[list[str]], None]] = {
            "/stats": self.stats,
            "/memory": self.show_memory,
            "/events": self.events,
            "/rollback": self.rollback,
            "/help": lambda _: self.say(HELP),
        }

    def say(self, text: str = "", end: str = "\n") -> None:
        self.stdout.write(text + end)
        self.stdout.flush()

    async def run(self) -> int:
        scope = self.memory.scope_id
        self.say(f"nmafc chat: {scope.agent_id}/{scope.conversation_id}. /help for commands.")
        while True:
            self.say("you> ", end="")
            line = await asyncio.to_thread(self.stdin.readline)
            if not line:
                self.say()
                return 0
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                return 0
            try:
                if text.startswith("/"):
                    self.command(text)
                else:
                    await self.turn(text)
            except NmafcError as exc:
                self.say(f"error [{exc.code}]: {exc.detail}\nfix: {exc.fix}")

    def command(self, text: str) -> None:
        name, *args = text.split()
        handler = self.commands.get(name)
        if handler is None:
            self.say(f"Unknown command {name}.\n{HELP}")
            return
        handler(args)

    async def turn(self, text: str) -> None:
        """Recall, inject, stream the reply, remember the exchange."""
        user = {"role": "user", "content": text}
        result = await asyncio.to_thread(self.memory.recall, text)
        preamble = memory_preamble(result.context if result.hits else "", text)
        messages = inject([*self.history[-HISTORY_MESSAGES:], user], preamble)
        reply = StreamedReply()
        self.say("assistant> ", end="")
        chunks = await self.provider.stream({"messages": messages})
        async for chunk in chunks:
            before = len(reply.parts)
            reply.feed(chunk)
            self.say("".join(reply.parts[before:]), end="")
        self.say()
        answer = reply.message
        self.history += [user, answer]
        await asyncio.to_thread(self.memory.remember, exchange([user], answer))

    def stats(self, _: list[str]) -> None:
        stats = self.memory.stats()
        records = ", ".join(f"{tier} {count}" for tier, count in stats.records.items()) or "none"
        self.say(
            f"turn {stats.turn:g} · {stats.turns} turns · memories: {records} · "
            f"events: {sum(stats.events.values())}"
        )

    def show_memory(self, _: list[str]) -> None:
        page = self.memory.engine.page(self.memory.scope_id, after=0, limit=200)
        if not page.records:
            self.say("(no memories yet)")
        for record in page.records:
            self.say(f"- [{record.tier}] {record.content}  ({record.entity})")

    def events(self, args: list[str]) -> None:
        count = int(args[0]) if args and args[0].isdigit() else 10
        events = self.memory.events(limit=100_000)[-count:]
        for event in events:
            self.say(f"#{event.seq} turn {event.turn:g} {event.kind}")
        if not events:
            self.say("(no events yet)")

    def rollback(self, args: list[str]) -> None:
        if not args:
            self.say("Usage: /rollback N (the turn to go back to; see /events)")
            return
        try:
            turn = float(args[0])
        except ValueError:
            self.say("Usage: /rollback N (a turn number)")
            return
        result = self.memory.rollback(turn)
        self.history.clear()  # the model should not see what memory no longer holds
        self.say(
            f"Rolled back to turn {result.to_turn:g}: {result.removed} memories removed, "
            f"{result.restored} restored, {result.turns_retracted} turns retracted."
        )


def run_chat(
    settings: Settings,
    *,
    agent_id: str,
    conversation_id: str,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    embedder: Embedder | None = None,
) -> int:
    """Run the REPL until ``/quit`` or end of input."""
    if not settings.llm.model:
        raise ProviderNotConfigured(
            "`nmafc chat` needs a model.", fix="Set NMAFC_LLM_MODEL or run `nmafc init`."
        )
    provider = create_provider(settings.llm)
    engine = MemoryEngine.open(settings, embedder=embedder)
    memory = SyncMemory(agent_id, conversation_id, engine=engine)

    async def main() -> int:
        try:
            session = ChatSession(memory, provider, stdin or sys.stdin, stdout or sys.stdout)
            return await session.run()
        finally:
            await provider.aclose()

    try:
        return asyncio.run(main())
    finally:
        engine.close()
