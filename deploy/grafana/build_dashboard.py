"""Writes deploy/grafana/dashboards/embedding-service.json from the panels in panels.py.

python deploy/grafana/build_dashboard.py           # regenerate
python deploy/grafana/build_dashboard.py --check   # exit 1 if the JSON is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from panels import PREFIX, REQUESTS, ROWS, Panel

OUTPUT = Path(__file__).parent / "dashboards" / "embedding-service.json"
GRID_WIDTH = 24
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def build() -> dict[str, Any]:
    """The whole dashboard as Grafana's JSON model."""
    panels: list[dict[str, Any]] = []
    y = 0
    for title, row in ROWS:
        panels.append(row_json(len(panels) + 1, title, y))
        y += 1
        x, row_height = 0, 0
        for panel in row:
            if x + panel.width > GRID_WIDTH:
                x, y, row_height = 0, y + row_height, 0
            panels.append(panel_json(len(panels) + 1, panel, {"x": x, "y": y}))
            x, row_height = x + panel.width, max(row_height, panel.height)
        y += row_height
    return dashboard_json(panels)


def row_json(panel_id: int, title: str, y: int) -> dict[str, Any]:
    """A row header that spans the grid."""
    grid = {"h": 1, "w": GRID_WIDTH, "x": 0, "y": y}
    return {"id": panel_id, "type": "row", "title": title, "collapsed": False,
            "gridPos": grid, "panels": []}  # fmt: skip


def panel_json(panel_id: int, panel: Panel, position: dict[str, int]) -> dict[str, Any]:
    """One panel at a grid position."""
    return {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": panel.height, "w": panel.width, **position},
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
        "options": OPTIONS[panel.kind],
        "targets": [
            {
                "refId": chr(ord("A") + i),
                "datasource": DATASOURCE,
                "expr": query.expr,
                "legendFormat": query.legend or "__auto",
                "range": True,
            }
            for i, query in enumerate(panel.queries)
        ],
    }


OPTIONS: dict[str, dict[str, Any]] = {
    "timeseries": {
        "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
        "tooltip": {"mode": "multi", "sort": "desc"},
    },
    "stat": {
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "colorMode": "value",
        "graphMode": "area",
    },
    "bargauge": {
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "orientation": "horizontal",
        "displayMode": "basic",
    },
}


def dashboard_json(panels: list[dict[str, Any]]) -> dict[str, Any]:
    """The dashboard around its panels: variables for the datasource and the job."""
    job = {
        "name": "job",
        "label": "Job",
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": f"label_values({PREFIX}_{REQUESTS}, job)", "refId": "job"},
        "definition": f"label_values({PREFIX}_{REQUESTS}, job)",
        "current": {"text": "embedding-service", "value": "embedding-service"},
        "refresh": 2,
        "includeAll": False,
        "multi": False,
    }
    datasource = {
        "name": "datasource",
        "label": "Data source",
        "type": "datasource",
        "query": "prometheus",
        "current": {"text": "Prometheus", "value": "prometheus"},
    }
    return {
        "uid": "embedding-service",
        "title": "Embedding service",
        "description": "Traffic, errors, latency and tables of the embedding similarity service.",
        "tags": ["embedding-service"],
        "editable": True,
        "timezone": "browser",
        "refresh": "10s",
        "time": {"from": "now-30m", "to": "now"},
        "schemaVersion": 39,
        "version": 1,
        "templating": {"list": [datasource, job]},
        "annotations": {"list": []},
        "panels": panels,
    }


def render() -> str:
    """The dashboard file's exact text."""
    return json.dumps(build(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the dashboard JSON, or with --check fail when the committed one is stale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = not OUTPUT.is_file() or OUTPUT.read_text(encoding="utf-8") != render()
        if stale:
            print(f"{OUTPUT} is stale: run python {Path(__file__).as_posix()}", file=sys.stderr)
        return int(stale)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
