"""``nmafc demo``: load a sample conversation into a demo scope through the HTTP API.

The sample was written for this project: four sessions over seven weeks between Maya and
her friend Sam, with a move from Lisbon to Porto (an override), dated events, an allergy,
moods and two pets, so every page of the dashboard has something to show.

It talks to the service at ``--url``. When no ``--url`` is given and nothing answers at
the default address, it starts the service in this process on a free loopback port, over
the same stores ``nmafc serve`` opens, loads the sample, and stops it again; the data
stays for the next ``nmafc serve``.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx

from nmafc.client import Client
from nmafc.settings import Settings

DEFAULT_URL = "http://127.0.0.1:8000"
AGENT = "demo"
CONVERSATION = "maya-and-sam"

Session = tuple[datetime, list[tuple[str, str]]]
SESSIONS: list[Session] = [
    (
        datetime(2024, 3, 4, 19, 0, tzinfo=UTC),
        [
            ("Maya", "Hi Sam! It was fun to meet you at the climbing gym."),
            ("Sam", "Of course! How is the new city treating you?"),
            ("Maya", "I just moved to Lisbon for a job at a robotics startup."),
            ("Maya", "I work at Kinetica Labs now, on motion planning for warehouse robots."),
            ("Maya", "I'm allergic to peanuts, so no satay for me when we go out."),
            ("Sam", "My sister Lena runs a bakery in Alfama; she makes peanut-free cakes."),
            ("Maya", "My dog Biscuit is a three-year-old beagle who hates the tram."),
            ("Maya", "I'm so tired right now."),
        ],
    ),
    (
        datetime(2024, 3, 18, 18, 30, tzinfo=UTC),
        [
            ("Maya", "I adopted a second pet yesterday, a grey cat called Pixel."),
            ("Sam", "How are Biscuit and Pixel getting along?"),
            ("Maya", "Biscuit is scared of Pixel. I'm planning to train them together."),
            ("Maya", "I'm learning Portuguese on Tuesday evenings with a tutor named Rita."),
            ("Sam", "My brother Theo visits next month; he is a marine biologist in Brest."),
            ("Maya", "My first demo for investors is on Friday."),
            ("Maya", "I'm nervous right now."),
        ],
    ),
    (
        datetime(2024, 4, 2, 20, 0, tzinfo=UTC),
        [
            ("Maya", "The investor demo went great last Friday, we signed our first customer!"),
            ("Sam", "Congratulations! Theo arrived on Saturday and we went diving in Sesimbra."),
            ("Maya", "I ran the Lisbon half marathon on March 24 in 1:58."),
            ("Maya", "I love grilled sardines, but I can't stand crowded beaches."),
            ("Maya", "I'm feeling great at the moment."),
        ],
    ),
    (
        datetime(2024, 4, 23, 17, 45, tzinfo=UTC),
        [
            ("Maya", "Big news: I moved to Porto, the startup opened an office there."),
            ("Sam", "Porto! Is Pixel happy in the new flat?"),
            ("Maya", "Pixel loves the balcony. Biscuit still hates the tram."),
            ("Maya", "My birthday is on May 12 and I'm going to throw a small party in Porto."),
            ("Sam", "I will bring a cake from Lena, without peanuts."),
            ("Maya", "I'm feeling stressed at the moment."),
        ],
    ),
]
QUESTIONS = ["Where does Maya live?", "What is Maya allergic to?", "What pets does Maya have?"]


def run_demo(settings: Settings, url: str | None, api_key: str | None) -> int:
    """Load the sample into the demo scope of the service at ``url`` (or an in-process one)."""
    with _service(settings, url) as (base, where):
        try:
            with Client(base, api_key=api_key) as client:
                agent = client.scopes(limit=1).bound_agent or AGENT
                demo = client.scoped(agent_id=agent, conversation_id=CONVERSATION)
                load(demo)
                _report(demo, base if where == "remote" else None)
        except httpx.TransportError as exc:
            print(f"error: cannot reach {base} ({exc}).\nfix: start `nmafc serve`, or omit --url")
            return 1
    return 0


def load(client: Client) -> None:
    """Replace the conversation's memory with the sample, one request per session."""
    client.purge()
    for start, messages in SESSIONS:
        client.add(
            [
                {
                    "role": "user",
                    "speaker": speaker,
                    "content": text,
                    "timestamp": (start + timedelta(minutes=2 * i)).isoformat(),
                }
                for i, (speaker, text) in enumerate(messages)
            ]
        )


def _report(client: Client, dashboard: str | None) -> None:
    stats = client.stats()
    facts = sum(stats.records.values())
    replaced = sum(stats.invalidated.values())
    print(
        f"Loaded {stats.turns} turns into {stats.scope}: {facts} facts {stats.records}, "
        f"{replaced} superseded"
    )
    for question in QUESTIONS:
        result = client.search(question, budget_tokens=200)
        print(f"\n? {question}   ({result.tokens} tokens)\n{result.context}")
    scope = f"agent {client.agent_id}, conversation {client.conversation_id}"
    if dashboard:
        print(f"\nOpen the dashboard at {dashboard}/ ({scope}).")
    else:
        print(f"\nStart `nmafc serve` and open http://127.0.0.1:8000/ ({scope}).")


@contextmanager
def _service(settings: Settings, url: str | None) -> Iterator[tuple[str, str]]:
    """The service's base URL: ``url``, the default one if it answers, or one started here."""
    if url is not None or _answers(DEFAULT_URL):
        yield (url or DEFAULT_URL).rstrip("/"), "remote"
        return
    print(f"No service answers at {DEFAULT_URL}; starting one in this process.")
    with _in_process(settings) as base:
        yield base, "local"


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def _in_process(settings: Settings) -> Iterator[str]:
    """``nmafc serve`` on a free loopback port, in a thread, for the duration of the block."""
    import uvicorn

    from nmafc.api import create_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="nmafc-demo-service")
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the in-process service did not start; see the log above")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
