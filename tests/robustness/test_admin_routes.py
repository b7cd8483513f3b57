"""The admin routes when they are off, and removing a table.

Before: a bare 404 "Not Found" when no admin key is configured, and no way to remove a table.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import small_vectors
from tests.robustness.conftest import AppFactory, assert_envelope

ADMIN = {"authorization": "Bearer admin-key"}


def test_the_admin_routes_off_say_so_and_which_settings_turn_them_on(
    make_client: AppFactory,
) -> None:
    with make_client() as client:
        for method in ("post", "delete"):
            answer = getattr(client, method)("/v1/admin/tables/small")
            error = assert_envelope(answer, 404, "AdminOff")
            assert "admin_key" in error["message"] and "admin_tables_dir" in error["message"]


def test_a_table_can_be_removed_and_a_reload_does_not_bring_it_back(
    make_client: AppFactory, tmp_path: Path
) -> None:
    with make_client(admin_key="admin-key") as client:
        removed = client.delete("/v1/admin/tables/small", headers=ADMIN)
        assert removed.status_code == 200 and removed.json()["name"] == "small"
        assert_envelope(client.get("/v1/tables/small"), 404, "UnknownTable")
        assert 'table="small"' not in client.get("/metrics").text
        reload = client.post("/v1/admin/tables/small/reload", headers=ADMIN)
        assert_envelope(reload, 404, "UnknownTable")
        assert_envelope(client.delete("/v1/admin/tables/small", headers=ADMIN), 404, "UnknownTable")
    assert small_vectors().shape[0] == 9  # the file itself is untouched: only the serving stops
