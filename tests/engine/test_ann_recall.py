"""With the cache off, recall searches LanceDB, through the vector index once one is built."""

from __future__ import annotations

from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

from .helpers import say


def test_the_ann_settings_reach_the_store_and_an_indexed_search_still_recalls(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    hot = settings.hot.model_copy(
        update={"cache_max_mb": 0, "ann_min_rows": 1, "ann_min_share": 0.0, "ann_nprobes": 3}
    )
    engine = MemoryEngine.open(
        settings.model_copy(update={"hot": hot}),
        embedder=shared_embedder,  # type: ignore[arg-type]
    )
    try:
        store = engine.ctx.hot.store
        assert (store.ann.min_rows, store.ann.nprobes) == (1, 3)
        engine.remember(
            scope,
            [say("I keep bees on the roof."), say("My car is red."),
             say("I grew up in Lisbon."), say("My sister plays the cello.")],
        )  # fmt: skip
        other = Scope(scope.agent_id + "-other", "c")
        engine.remember(other, [say("My bees live in the garden shed.")])
        assert store.vector_index() is None
        engine.compact()
        assert store.vector_index() is not None
        assert store.uses_index(scope)
        found = engine.recall(scope, "Where are the bees?", RecallOptions(reinforce=False))
        assert "bees on the roof" in found.hits[0].content
        assert all("shed" not in hit.content for hit in found.hits)  # another agent's
        assert engine.ctx.hot.loads == 0
    finally:
        engine.close()
