"""Settings: defaults, env vars, a config file, CLI flags, and their precedence."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pydantic import ValidationError

from service.cli.main import parse_table_flag
from service.config import (
    CONFIG_FILE_VARIABLE,
    DEFAULT_STATIC_NAME,
    DEFAULT_TABLE_NAME,
    Settings,
    load_settings,
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_FILE_VARIABLE, raising=False)


def test_no_configuration_serves_the_default_tables() -> None:
    spec, static = Settings().served_tables()
    assert spec.name == DEFAULT_TABLE_NAME
    assert (spec.path / "model.safetensors").is_file()
    # WordLlama's weights from inside its package, with its tokenizer where the package keeps it.
    assert static.name == DEFAULT_STATIC_NAME and static.format == "wordllama"
    assert static.path is not None and static.path.is_file()
    tokenizers = static.path.parent.parent / "tokenizers"
    assert (tokenizers / "l2_supercat_tokenizer_config.json").is_file()
    assert Settings().port == 8000


def test_tables_from_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "EMBEDDING_SERVICE_TABLES", '[{"name": "glove", "path": "/d/g.txt", "format": "glove"}]'
    )
    monkeypatch.setenv("EMBEDDING_SERVICE_MAX_K", "50")
    settings = Settings()
    assert [(t.name, str(t.path), t.format) for t in settings.tables] == [
        ("glove", "/d/g.txt", "glove")
    ]
    assert settings.max_k == 50


def test_config_file_below_env_below_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "service.toml"
    config.write_text(
        "port = 9001\nmax_k = 20\n"
        '[[tables]]\nname = "a"\npath = "/x.npy"\ncase_insensitive = true\n'
    )
    monkeypatch.setenv("EMBEDDING_SERVICE_MAX_K", "30")
    settings = load_settings(config, port=9002)
    assert (settings.port, settings.max_k) == (9002, 30)
    assert settings.tables[0].case_insensitive is True


def test_json_config_file(tmp_path: Path) -> None:
    config = tmp_path / "service.json"
    config.write_text('{"tables": [{"name": "b", "path": "/y.bin"}]}')
    assert load_settings(config).tables[0].name == "b"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValidationError):
        Settings(tables=[{"name": "has space", "path": "/x"}])
    with pytest.raises(ValidationError):
        Settings(tables=[{"name": "a", "path": "/x", "format": "parquet"}])
    with pytest.raises(ValidationError):
        Settings(max_k=0)


def test_table_flag() -> None:
    assert parse_table_flag("glove=/d/g.txt,format=glove,case_insensitive=true") == {
        "name": "glove",
        "path": "/d/g.txt",
        "format": "glove",
        "case_insensitive": "true",
    }
    with pytest.raises(argparse.ArgumentTypeError):
        parse_table_flag("no-path")


def test_loading_options_from_the_table_flag_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flag = parse_table_flag("big=/d/cc.en.300.vec.gz,limit=1000,unicode_errors=replace")
    spec = Settings(tables=[flag]).tables[0]
    assert (spec.limit, spec.unicode_errors) == (1000, "replace")
    monkeypatch.setenv(
        "EMBEDDING_SERVICE_TABLES", '[{"name": "a", "path": "/x.vec", "unicode_errors": "ignore"}]'
    )
    assert load_settings().tables[0].unicode_errors == "ignore"
    with pytest.raises(ValidationError):
        Settings(tables=[{"name": "a", "path": "/x", "unicode_errors": "surrogateescape"}])
    with pytest.raises(ValidationError):
        Settings(tables=[{"name": "a", "path": "/x", "limit": 0}])
