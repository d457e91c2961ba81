"""RAM per cached record and load time of one large scope's working set (issue 25, item 1).

    python benchmarks/working_set_ram.py RECORDS [DATA_DIR]

Writes RECORDS facts of varied text (random unit vectors, as ``nmafc bench scale`` words
them) into one scope — once: a DATA_DIR that holds them is reused — then opens a fresh
engine, loads the scope's working set from the local LanceDB table and prints one JSON
line: the load's seconds, RSS grown per record (after freed memory is returned to the
system), and the cache's own accounting per record. Run it against two checkouts to
compare them; each run is one process, so its RSS is its own.
"""

from __future__ import annotations

import ctypes
import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

from nmafc.bench.scale_text import sentence
from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.embedding.factory import create_embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.runtime import prepare_server_process
from nmafc.settings import Settings

SCOPE = Scope("ram", "big")
BATCH = 2000


def _rss() -> int:
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # what glibc holds freed is not the set's
    time.sleep(0.5)
    return int(psutil.Process().memory_info().rss)


def main(records: int, data_dir: str) -> dict[str, object]:
    settings = prepare_server_process(
        Settings(
            data_dir=Path(data_dir),
            hot={"cache_max_mb": 16384},  # type: ignore[arg-type]
            consolidation={"inline": False},  # type: ignore[arg-type]
        )
    )
    embedder = create_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir())
    built = Path(data_dir) / f"built-{records}"
    if not built.exists():
        engine = MemoryEngine.open(settings, embedder=embedder)
        rng, text = np.random.default_rng(1), random.Random(1)
        for start in range(0, records, BATCH):
            drafts = []
            for _ in range(min(BATCH, records - start)):
                said = sentence(text)
                vector = rng.standard_normal(384).astype(np.float32)
                drafts.append(
                    FactDraft(
                        content=said.text,
                        entity=said.entity,
                        tier=Tier.CORE_ANCHOR,
                        related_entities=(said.related,),
                        vector=vector / np.linalg.norm(vector),
                    )
                )
            engine.ingest(SCOPE, drafts)
        engine.compact()
        engine.close()
        built.write_text("done")
    engine = MemoryEngine.open(settings, embedder=embedder)
    row = engine.ctx.row(SCOPE)
    assert row is not None, "the scope was not written"
    before = _rss()
    started = time.perf_counter()
    working = engine.ctx.hot.working_set(row)
    load_s = time.perf_counter() - started
    grown = _rss() - before
    report = {
        "records": len(working),
        "load_seconds": round(load_s, 2),
        "rss_bytes_per_record": round(grown / len(working)),
        "accounted_bytes_per_record": round(working.nbytes / len(working)),
        "int8_scan": len(working) >= settings.hot.int8_scan_min_rows > 0,
    }
    engine.close()
    return report


if __name__ == "__main__":
    directory = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="nmafc-ram-")
    print(json.dumps(main(int(sys.argv[1]), directory)))
