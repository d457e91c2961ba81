"""The entity graph drawn from records' entities and links."""

from nmafc.core.graph import entity_graph
from nmafc.core.records import MemoryRecord
from nmafc.core.tiers import Tier


def _record(rid: str, entity: str, *links: str, tier: Tier = Tier.ACTIVE_CONTEXT) -> MemoryRecord:
    return MemoryRecord(
        id=rid, agent_id="a", conversation_id="c", entity=entity, content=rid, tier=tier,
        related_entities=links,
    )  # fmt: skip


def test_nodes_count_records_and_edges_count_links() -> None:
    graph = entity_graph(
        [
            _record("1", "caroline", "melanie"),
            _record("2", "caroline", "melanie", tier=Tier.CORE_ANCHOR),
            _record("3", "melanie", "caroline"),
            _record("4", "melanie", "melanie"),  # a self-link is not an edge
        ],
        max_nodes=10,
    )
    assert [(n.entity, n.records) for n in graph.nodes] == [("caroline", 2), ("melanie", 2)]
    assert graph.nodes[0].tiers == {"ActiveContext": 1, "CoreAnchor": 1}
    assert [(e.source, e.target, e.weight) for e in graph.edges] == [
        ("caroline", "melanie", 2),
        ("melanie", "caroline", 1),
    ]
    assert graph.truncated is False


def test_mentioned_only_entities_are_nodes_and_the_graph_is_capped() -> None:
    graph = entity_graph([_record("1", "a", "b", "c"), _record("2", "a")], max_nodes=2)
    assert [(n.entity, n.records) for n in graph.nodes] == [("a", 2), ("b", 0)]
    assert [(e.source, e.target) for e in graph.edges] == [("a", "b")]
    assert graph.truncated is True
