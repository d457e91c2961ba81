"""How the API process serves the dashboard's export beside the API, without a browser."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from nmafc.api.errors import install_error_handlers
from nmafc.web import BUILD_HINT, dashboard_app

HTML = {"Accept": "text/html"}


def export(root: Path) -> Path:
    """A miniature ``next build`` export with ``trailingSlash: true``."""
    (root / "explorer").mkdir(parents=True)
    (root / "_next" / "static" / "chunks").mkdir(parents=True)
    (root / "index.html").write_text("<h1>overview</h1>")
    (root / "explorer" / "index.html").write_text("<h1>explorer</h1>")
    (root / "404.html").write_text("<h1>not here</h1>")
    (root / "_next" / "static" / "chunks" / "app-1a2b.js").write_text("1")
    return root


def client(directory: Path) -> TestClient:
    app = FastAPI()
    install_error_handlers(app, retry_after_s=1)

    @app.get("/v1/ping")
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    app.router.default = dashboard_app(app.router.default, directory)
    # The app runs in its own thread: the browser tests' Playwright owns this one's loop.
    return TestClient(app, base_url="http://ui.test", follow_redirects=False)


def test_each_page_answers_on_reload_at_its_own_path(tmp_path: Path) -> None:
    with client(export(tmp_path)) as http:
        assert (http.get("/")).text == "<h1>overview</h1>"
        assert (http.get("/explorer/")).text == "<h1>explorer</h1>"
        moved = http.get("/explorer?x=1")
        assert moved.status_code == 307
        assert moved.headers["location"] == "/explorer/?x=1"
        asset = http.get("/_next/static/chunks/app-1a2b.js")
        assert "immutable" in asset.headers["cache-control"]
        assert (http.get("/v1/ping")).json() == {"pong": "yes"}


def test_unknown_paths_stay_problems_and_pages_get_the_404_page(tmp_path: Path) -> None:
    with client(export(tmp_path)) as http:
        for path in ("/v1/nope", "/ws/nope", "/nope.js"):
            response = http.get(path, headers=HTML if path.startswith("/v1") else {})
            assert response.status_code == 404, path
            assert response.headers["content-type"] == "application/problem+json", path
        page = http.get("/nope/", headers=HTML)
        assert page.status_code == 404
        assert page.text == "<h1>not here</h1>"
        posted = http.post("/explorer/")
        assert posted.headers["content-type"] == "application/problem+json"


def test_without_a_build_the_root_says_how_to_build_it(tmp_path: Path) -> None:
    with client(tmp_path / "missing") as http:
        root = http.get("/")
        assert root.status_code == 200
        assert BUILD_HINT in root.text
        assert "npm" in root.text  # what to install
        assert 'href="/docs"' in root.text  # and where the API is meanwhile
        assert (http.get("/explorer/")).headers["content-type"] == ("application/problem+json")
