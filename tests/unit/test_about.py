"""Graphbook reports the version it was built as (its distribution's metadata), and a
checkout reports the source's version, whatever else is installed beside it."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import graphbook
from graphbook import about

PACKAGE = Path(graphbook.__file__).resolve().parent


class Dist:
    """A distribution of Graphbook installed in `folder` (as metadata.distributions gives)."""

    def __init__(self, folder: Path, version: str) -> None:
        self.folder = folder
        self.version = version

    def locate_file(self, path: str) -> Path:
        return self.folder / path


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Dist]]:
    found: list[Dist] = []

    def distributions(**kwargs: Any) -> list[Dist]:
        assert kwargs == {"name": "graphbook"}
        return found

    monkeypatch.setattr(metadata, "distributions", distributions)
    about.version.cache_clear()
    yield found
    about.version.cache_clear()


def test_the_version_is_that_of_the_distribution_whose_files_run(installed: list[Dist]) -> None:
    installed += [Dist(Path("/elsewhere"), "0.0.1"), Dist(PACKAGE.parent, "7.8.9")]
    assert about.version() == "7.8.9"


def test_a_checkout_reports_the_source_version(installed: list[Dist], tmp_path: Path) -> None:
    (tmp_path / "graphbook").mkdir()
    (tmp_path / "graphbook" / "__init__.py").write_text("")  # another copy, not the one running
    installed.append(Dist(tmp_path, "0.0.1"))
    assert about.version() == graphbook.__version__
    installed.clear()
    about.version.cache_clear()
    assert about.version() == graphbook.__version__
