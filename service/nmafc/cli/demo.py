"""``nmafc demo``: a first look at memory with no setup, no network and no API key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nmafc.memory import SyncMemory
from nmafc.settings import Settings

CONVERSATION = [
    ("Maya", "Hi! I'm Maya. I just moved to Lisbon for a job at a robotics startup."),
    ("assistant", "Welcome to Lisbon! What will you be working on?"),
    ("Maya", "Motion planning for warehouse robots. Also, I'm allergic to peanuts, so no satay."),
    ("Maya", "My brother Theo visits next month; he is a marine biologist."),
    ("Maya", "Feeling a bit tired today after the flight."),
    ("Maya", "Update: I moved again, I live in Porto now, the startup opened an office there."),
]
QUESTIONS = ["Where does Maya live?", "What can't Maya eat?", "What does Theo do?"]


def run_demo(settings: Settings) -> None:
    start = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    with SyncMemory("demo-agent", "demo-conversation", settings=settings) as memory:
        memory.purge()
        for minute, (speaker, text) in enumerate(CONVERSATION):
            role = "assistant" if speaker == "assistant" else "user"
            memory.remember(
                {"role": role, "speaker": speaker, "content": text},
                occurred_at=start + timedelta(days=minute),
            )
        stats = memory.stats()
        print(
            f"Remembered {stats.turns} turns → {sum(stats.records.values())} facts {stats.records}"
        )
        for question in QUESTIONS:
            result = memory.recall(question, budget_tokens=250)
            print(f"\n? {question}   ({result.tokens} tokens)\n{result.context}")
        print(f"\nData lives in {settings.resolved_data_dir()} (set NMAFC_DATA_DIR to move it).")
