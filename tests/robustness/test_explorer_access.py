"""The explorer's files need no key (they hold no data); its API calls do; metrics stay bounded."""

from __future__ import annotations

import re

from tests.robustness.conftest import AppFactory


def test_pages_are_open_behind_keys_and_the_api_is_not(make_client: AppFactory) -> None:
    with make_client(api_keys=["k1"]) as client:
        for path in ("/", "/explorer", "/explorer/static/main.js", "/explorer/static/nope.js"):
            assert client.get(path).status_code in (200, 404), path
        body = {"points": 3}
        assert client.post("/v1/tables/small/projection", json=body).status_code == 401
        authorised = {"authorization": "Bearer k1"}
        response = client.post("/v1/tables/small/projection", json=body, headers=authorised)
        assert response.status_code == 200
        # A prefix of the page's path is not the page.
        assert client.get("/explorerx").status_code == 401


def test_metrics_name_route_templates_not_files(make_client: AppFactory) -> None:
    with make_client() as client:
        for name in ("main.js", "plot/plot.js", "nope-1.js", "nope-2.js"):
            client.get(f"/explorer/static/{name}")
        metrics = client.get("/metrics").text
    routes = set(re.findall(r'route="([^"]*)"', metrics))
    assert "/explorer/static/{name:path}" in routes
    assert not [route for route in routes if route.endswith(".js")]
