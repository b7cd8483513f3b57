"""deploy/live_monitoring.py's offline parts: Grafana's variables as the dashboard fills them."""

from __future__ import annotations

import pytest

from deploy.live_monitoring import CheckFailed, dashboard_queries, fill, grafana_rate_interval


def test_rate_interval_is_four_scrapes_of_the_datasource() -> None:
    # timeInterval 5s: max(5 s + 5 s, 4 x 5 s).
    assert grafana_rate_interval() == "20s"


def test_fill_replaces_longer_names_first_and_refuses_unknown_ones() -> None:
    assert fill("$jobs $job", {"$job": "a", "$jobs": "b"}) == "b a"
    with pytest.raises(CheckFailed, match=r"\$instance"):
        fill('up{instance="$instance"}', {"$job": "a"})


def test_every_panel_query_is_filled() -> None:
    queries = dashboard_queries({"$job": "embedding-service", "$__rate_interval": "20s"})
    assert len(queries) >= 20
    assert all("$" not in expr for _, expr in queries)
