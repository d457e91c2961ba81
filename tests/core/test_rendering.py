"""Rendering fills the token budget with dated facts and source turns, never more."""

from nmafc.core.rendering import SourceTurn, fact_line, render
from nmafc.core.turns import Turn
from nmafc.embedding.tokens import default_counter

from .factories import T0, record


def _turn(i: int, text: str) -> Turn:
    return Turn(i, "a", "c", float(i), "user", "Caroline", text, occurred_at=T0)


def test_fact_lines_carry_their_validity_window_and_date() -> None:
    line = fact_line(record(valid_at=3))
    assert line.endswith("(valid: turn 3, 8 May 2023 – present)")


def test_render_respects_the_budget_and_reports_what_it_showed() -> None:
    count = default_counter().count
    facts = [record(content=f"Fact number {i} about a long and winding topic") for i in range(50)]
    sources = [SourceTurn(_turn(i, "word " * 40)) for i in range(10)]
    for budget in (60, 200, 1000):
        out = render(facts, sources, budget_tokens=budget, count=count)
        assert out.tokens <= budget
        assert out.tokens == count(out.text)
    out = render(facts, sources, budget_tokens=1000, count=count)
    assert out.text.startswith("<FACTS>")
    assert "<SOURCES>" in out.text
    assert out.fact_ids == [f.id for f in facts[: len(out.fact_ids)]]
    assert out.turn_ids
    assert all(isinstance(t, int) for t in out.turn_ids)


def test_unused_source_budget_goes_back_to_facts() -> None:
    count = default_counter().count
    facts = [record(content=f"Fact {i} " + "detail " * 10) for i in range(40)]
    with_sources = render(facts, [SourceTurn(_turn(1, "short"))], budget_tokens=400, count=count)
    facts_only = render(facts, [], budget_tokens=400, count=count)
    assert len(with_sources.fact_ids) >= len(facts_only.fact_ids) - 1
