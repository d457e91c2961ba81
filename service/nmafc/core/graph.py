"""The entity graph: entities as nodes, ``related_entities`` links as weighted edges."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from nmafc.core.records import MemoryRecord


@dataclass(frozen=True, slots=True)
class EntityNode:
    entity: str
    records: int
    tiers: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EntityEdge:
    source: str
    target: str
    weight: int


@dataclass(frozen=True, slots=True)
class EntityGraph:
    nodes: list[EntityNode]
    edges: list[EntityEdge]
    truncated: bool = False


def entity_graph(records: Iterable[MemoryRecord], max_nodes: int) -> EntityGraph:
    """Nodes ranked by how many records they hold (then name); edges among kept nodes.

    An entity only ever named as a link (no record of its own) is a node with 0 records.
    """
    held: Counter[str] = Counter()
    tiers: dict[str, Counter[str]] = {}
    links: Counter[tuple[str, str]] = Counter()
    for record in records:
        held[record.entity] += 1
        tiers.setdefault(record.entity, Counter())[record.tier.value] += 1
        for other in record.related_entities:
            if other != record.entity:
                links[(record.entity, other)] += 1
    names = set(held) | {target for _, target in links}
    ranked = sorted(names, key=lambda name: (-held[name], name))
    kept = set(ranked[:max_nodes])
    nodes = [
        EntityNode(name, held[name], dict(tiers.get(name, Counter())))
        for name in ranked[:max_nodes]
    ]
    edges = [
        EntityEdge(source, target, weight)
        for (source, target), weight in sorted(links.items())
        if source in kept and target in kept
    ]
    return EntityGraph(nodes, edges, truncated=len(names) > max_nodes)
