"""The dashboard in headless Chromium, against ``nmafc serve`` with ``nmafc demo`` loaded.

Every page is checked against what the API itself answers, so a page that renders
placeholders or stale numbers fails; screenshots land in ``test-artifacts/screenshots``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import DEMO, Service, load_demo, start_service, stop_service

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# Each page and what shows that its data has arrived.
PAGES = {
    "overview": ("/", "Overview", "ol.list li"),
    "explorer": ("/explorer/", "Memory explorer", "ul[aria-label=Memories] li"),
    "graph": ("/graph/", "Entity graph", "g.graph-node"),
    "decay": ("/decay/", "Decay curves", "table tbody tr"),
    "timeline": ("/timeline/", "Event timeline", "ol.list li"),
    "connect": ("/connect/", "Connect an agent", "table tr"),
}


@pytest.fixture
def page(chromium: Any, demo_service: Service) -> Iterator[Any]:
    """A fresh tab at laptop size; page errors fail the test."""
    context = chromium.new_context(viewport=LAPTOP, base_url=demo_service.url)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.set_default_timeout(10_000)
    yield tab
    context.close()
    assert not errors, errors


def open_page(page: Any, name: str) -> None:
    path, heading, loaded = PAGES[name]
    page.goto(path)
    page.get_by_role("heading", level=1, name=heading).wait_for()
    page.locator(loaded).first.wait_for()


def card(page: Any, label: str) -> str:
    text: str = page.locator(".card", has_text=label).locator("dd").inner_text()
    return text


def test_every_page_renders_the_demo_scope_from_the_api(page: Any, demo_service: Service) -> None:
    with demo_service.api(**DEMO) as api:
        stats = api.get("/v1/stats").json()
        memories = api.get("/v1/memories", params={"limit": 500}).json()["items"]
        graph = api.get("/v1/graph", params={"max_nodes": 150}).json()
        events = api.get("/v1/events", params={"limit": 1000}).json()["items"]
    valid = sum(stats["records"].values())
    assert valid > 0

    open_page(page, "overview")
    assert page.get_by_label("Conversation").input_value() == "maya-and-sam"
    assert card(page, "Valid records") == str(valid)
    assert card(page, "Turns stored") == str(stats["turns"])
    assert (
        page.locator("section", has_text="Hot vs Cold")
        .get_by_text(str(stats["hot_rows"]), exact=True)
        .count()
    )

    open_page(page, "explorer")
    page.get_by_text(f"{len(memories)} memories").wait_for()
    assert page.get_by_text(memories[0]["content"]).count() > 0

    open_page(page, "graph")
    assert page.locator("g.graph-node").count() == len(graph["nodes"]) > 0

    open_page(page, "decay")
    assert page.locator("table tbody tr").count() == valid
    page.get_by_text(f"prune line {stats['decay']['w_prune']}").wait_for()

    open_page(page, "timeline")
    page.get_by_role(
        "img", name=re.compile(f"^Events per turn by type: {len(events)} events")
    ).wait_for()

    open_page(page, "connect")
    snippets = page.locator("pre").all_inner_texts()
    assert any(demo_service.url in s and "X-Conversation-ID: maya-and-sam" in s for s in snippets)
    page.get_by_role("cell", name="/v1/memories/search", exact=True).wait_for()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280x800", "390x844"])
def test_pages_fit_the_screen_without_sideways_scrolling(
    chromium: Any, demo_service: Service, screenshots: Path, viewport: dict[str, int]
) -> None:
    context = chromium.new_context(viewport=viewport, base_url=demo_service.url)
    page = context.new_page()
    overflowing = {}
    for name in PAGES:
        open_page(page, name)
        page.wait_for_load_state("networkidle")
        excess = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if excess > 0:
            overflowing[name] = excess
        size = f"{viewport['width']}x{viewport['height']}"
        page.screenshot(path=screenshots / f"{name}-{size}.png", full_page=True)
    context.close()
    assert not overflowing, f"pages wider than the screen (px): {overflowing}"


def test_search_returns_hits_with_their_score_breakdown(page: Any) -> None:
    open_page(page, "explorer")
    page.get_by_label("Search memories (recall)").fill("Where does Maya live?")
    page.keyboard.press("Enter")
    hits = page.get_by_role("list", name="Search hits").locator("li")
    hits.first.wait_for()
    assert hits.count() > 0
    breakdown = hits.first.get_by_label("Score breakdown").inner_text()
    assert re.search(r"score:?\s*\d\.\d{4}", breakdown), breakdown
    assert "vector" in breakdown
    assert "keyword" in breakdown
    assert page.get_by_role("list", name="Search hits").get_by_text("Porto").count() > 0


def test_explorer_shows_history_and_changes_tier_then_forgets(
    page: Any, demo_service: Service
) -> None:
    conversation = f"explorer-{uuid.uuid4().hex[:6]}"
    scope = {"X-Agent-ID": "demo", "X-Conversation-ID": conversation}
    with demo_service.api(**scope) as api:
        added = api.post(
            "/v1/memories",
            json={
                "facts": [{"content": "Maya keeps a sourdough starter.", "tier": "ActiveContext"}]
            },
        )
        assert added.status_code in (200, 201), added.text
        (memory,) = api.get("/v1/memories").json()["items"]
        # The picker lists the new conversation; choosing it re-scopes every page.
        page.goto("/explorer/")
        page.get_by_label("Conversation").select_option(conversation)
        page.get_by_role("list", name="Memories").get_by_text(
            "Maya keeps a sourdough starter."
        ).click()
        detail = page.locator("section", has=page.get_by_role("heading", name="Memory", exact=True))
        detail.get_by_text("still valid").first.wait_for()

        detail.get_by_label("Tier").select_option("CoreAnchor")
        detail.get_by_role("button", name="Change tier").click()
        # A tier change is made in place: the history gains an update event.
        detail.locator(".badge", has_text="update").wait_for()
        assert api.get(f"/v1/memories/{memory['id']}").json()["tier"] == "CoreAnchor"

        page.once("dialog", lambda dialog: dialog.accept())
        detail.get_by_role("button", name="Forget (invalidate)").click()
        detail.get_by_role("button", name="Forget (invalidate)").wait_for(state="detached")
        history = api.get(f"/v1/memories/{memory['id']}/history").json()
        assert not any(v["invalid_at"] is None for v in history["versions"])


def test_an_ingest_over_http_appears_in_the_timeline_live(page: Any, demo_service: Service) -> None:
    open_page(page, "timeline")
    indicator = page.get_by_role("status").filter(has_text="Live")
    page.locator(".live[data-status=live]").wait_for()
    assert indicator.inner_text().strip() == "Live"
    fact = f"Maya's new neighbour is called Ilse {uuid.uuid4().hex[:6]}."
    with demo_service.api(**DEMO) as api:
        response = api.post(
            "/v1/memories",
            json={"messages": [{"role": "user", "speaker": "Maya", "content": fact}]},
        )
        assert response.status_code in (200, 201), response.text
    fresh = page.locator("li.fresh", has_text=fact.removeprefix("Maya's ").rstrip("."))
    fresh.first.wait_for(timeout=10_000)


def test_graph_shows_nodes_and_lists_a_nodes_facts(page: Any, demo_service: Service) -> None:
    with demo_service.api(**DEMO) as api:
        nodes = api.get("/v1/graph", params={"max_nodes": 150}).json()["nodes"]
    busiest = max(nodes, key=lambda n: n["records"])
    open_page(page, "graph")
    assert page.locator("g.graph-node").count() == len(nodes)
    label = busiest["entity"].replace("_", " ")
    node = page.get_by_role("button", name=f"{label}: {busiest['records']} records", exact=True)
    node.focus()
    page.keyboard.press("Enter")
    facts = page.get_by_role("list", name="Facts of the entity").locator("li")
    facts.first.wait_for()
    assert facts.count() >= busiest["records"]


def test_keyboard_reaches_the_skip_link_the_pages_and_the_search_box(page: Any) -> None:
    open_page(page, "explorer")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    reached: list[str] = []
    for _ in range(30):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate(
                "document.activeElement.getAttribute('aria-label') "
                "|| document.activeElement.labels?.[0]?.textContent "
                "|| document.activeElement.textContent"
            )
        )
        if page.evaluate("document.activeElement.type") == "search":
            break
    for link in ("Overview", "Explorer", "Graph", "Decay", "Timeline", "Connect"):
        assert link in reached
    assert page.evaluate("document.activeElement.type") == "search", reached
    # Every control has a name a screen reader can say.
    unlabelled = page.evaluate(
        """[...document.querySelectorAll('input, select, textarea, button')]
            .filter(e => !(e.labels?.length || e.getAttribute('aria-label')
                           || e.textContent.trim()))
            .map(e => e.outerHTML)"""
    )
    assert unlabelled == []


def test_serve_prints_where_the_dashboard_is(demo_service: Service) -> None:
    assert f"dashboard  {demo_service.url}/\n" in demo_service.output


def test_with_auth_on_the_dashboard_asks_for_a_key_then_shows_its_agent(
    chromium: Any, tmp_path: Path
) -> None:
    service = start_service(tmp_path, NMAFC_API_KEYS="demo-key-1234:demo")
    try:
        load_demo(service.url, api_key="demo-key-1234")
        context = chromium.new_context(viewport=LAPTOP, base_url=service.url)
        page = context.new_page()
        page.goto("/")
        page.get_by_role("heading", name="API key").wait_for()
        page.get_by_label("API key").fill("wrong-key")
        page.keyboard.press("Enter")
        page.get_by_text("That key was refused").wait_for()
        page.get_by_label("API key").fill("demo-key-1234")
        page.keyboard.press("Enter")
        page.get_by_text("Agent (from your key)").wait_for()
        page.locator(".live[data-status=live]").wait_for()
        assert int(card(page, "Valid records")) > 0
        context.close()
    finally:
        stop_service(service)
