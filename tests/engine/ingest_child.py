"""A child process that ingests forever and acknowledges each write on stdout.

Run by the durability test, which SIGKILLs it mid-stream: ``python -m tests.engine.ingest_child
DATA_DIR COLD_URI``. A line ``ACK <n> <turn id>`` is printed only after ``remember`` returned,
which is the moment a client would be told its write succeeded.
"""

from __future__ import annotations

import sys

from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.settings import Settings


def main() -> None:
    data_dir, cold_uri = sys.argv[1], sys.argv[2]
    settings = Settings(data_dir=data_dir, cold={"uri": cold_uri})  # type: ignore[arg-type]
    engine = MemoryEngine.open(settings)
    scope = Scope("durable", "c1")
    print("READY", flush=True)
    n = 0
    while True:
        n += 1
        result = engine.remember(
            scope, [Message(f"note {n}: I visited city number {n} today", speaker="Ana")]
        )
        if n % 7 == 0:
            engine.recall(scope, f"city number {n - 3}")  # reinforcement writes too
        if n % 11 == 0:
            engine.maintain(scope)
        print(f"ACK {n} {result.turns[0].id}", flush=True)


if __name__ == "__main__":
    main()
