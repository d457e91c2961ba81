"""Response models: a search's fast JSON is the declared model's JSON, byte for byte."""

from __future__ import annotations

import pytest

from nmafc.api.converters import search_result, search_result_json
from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.wire import SearchResult
from tests.engine.helpers import say


@pytest.mark.parametrize("cold_uri", ["sqlite"], indirect=True)
def test_search_json_equals_the_models_json_for_facts_turns_and_closed_facts(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(
        scope,
        [
            say("I adopted a puppy named Oscar yesterday."),
            say("Did Oscar like the beach?", speaker="Melanie", minutes=1),
        ],
    )
    engine.ingest(scope, [FactDraft("Caroline lives in Boston", "home", Tier.CORE_ANCHOR)])
    engine.ingest(scope, [FactDraft("Caroline lives in Denver", "home_2", overrides_entity="home")])
    options = RecallOptions(include_invalidated=True, reinforce=False)
    result = engine.recall(scope, "Where does Caroline live with Oscar?", options)
    kinds = {hit.kind for hit in result.hits}
    closed = [h for h in result.hits if h.record is not None and h.record.invalid_at is not None]

    body = search_result_json(result)

    assert kinds == {"fact", "turn"}
    assert closed, "an overridden fact should be among the hits"
    assert body == search_result(result).model_dump_json().encode()
    assert SearchResult.model_validate_json(body).hits[0].id == result.hits[0].id
