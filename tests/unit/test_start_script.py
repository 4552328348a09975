"""scripts/start: a first start installs everything; a later one installs and builds only what
changed (a second start on an installed machine goes straight to `graphbook serve`).

The script runs for real (bash, in a copy of the repository's layout); pip, npm and graphbook are
stand-ins on PATH that write down how they were called, so nothing is installed."""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = """#!/usr/bin/env bash
echo "{name} $*" >> "$START_LOG"
{extra}
"""


def stand_in(folder: Path, name: str, extra: str = "") -> None:
    path = folder / name
    path.write_text(STAND_IN.format(name=name, extra=extra))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "start", repo / "scripts" / "start")
    (repo / "scripts" / "install").write_text(
        'echo "install" >> "$START_LOG"\n'
        "mkdir -p node_modules graphbook/webapp\n"
        "touch graphbook/webapp/index.html\n"
    )
    (repo / "graphbook").mkdir()
    (repo / "graphbook" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text("[project]\nname = 'graphbook'\n")
    (repo / "package.json").write_text("{}\n")
    (repo / "package-lock.json").write_text("{}\n")
    (repo / "web" / "src").mkdir(parents=True)
    (repo / "web" / "src" / "main.ts").write_text("export {};\n")
    (repo / "web" / "index.html").write_text("<!doctype html>\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in(bin_dir, "npm")
    stand_in(bin_dir, "graphbook")
    # The Python that imports graphbook from where GRAPHBOOK_AT says.
    stand_in(bin_dir, "python", 'echo "$GRAPHBOOK_AT"')
    return repo


def start(repo: Path, *args: str, where: Path | None = None) -> list[str]:
    log = repo.parent / "calls.log"
    log.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{repo.parent / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "START_LOG": str(log),
        "GRAPHBOOK_AT": str((where or repo / "graphbook" / "__init__.py").resolve()),
    }
    env.pop("GRAPHBOOK_REINSTALL", None)
    script = str(repo / "scripts" / "start")
    subprocess.run(["bash", script, *args], env=env, check=True, timeout=60)
    return [line for line in log.read_text().splitlines() if not line.startswith("python")]


SERVE = "graphbook serve --workflows workflows --nodes custom_nodes"
NPM_CI = "npm ci --no-audit --no-fund --loglevel=error"


def test_a_second_start_only_serves(checkout: Path) -> None:
    assert start(checkout) == ["install", SERVE]
    assert start(checkout, "--port", "8080") == [f"{SERVE} --port 8080"]


def test_a_later_start_builds_or_installs_only_what_changed(checkout: Path) -> None:
    start(checkout)
    (checkout / "web" / "src" / "main.ts").write_text("export const changed = 1;\n")
    assert start(checkout) == ["npm run build --silent", SERVE]
    (checkout / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    assert start(checkout) == [NPM_CI, "npm run build --silent", SERVE]
    (checkout / "pyproject.toml").write_text("[project]\nname = 'graphbook'\nversion = '2'\n")
    assert start(checkout) == ["install", SERVE]
    assert start(checkout) == [SERVE]


def test_a_removed_build_is_built_again(checkout: Path) -> None:
    start(checkout)
    (checkout / "graphbook" / "webapp" / "index.html").unlink()
    assert start(checkout) == ["npm run build --silent", SERVE]


def test_another_checkouts_package_or_reinstall_installs_everything(
    checkout: Path, tmp_path: Path
) -> None:
    start(checkout)
    elsewhere = tmp_path / "other" / "graphbook" / "__init__.py"
    assert start(checkout, where=elsewhere) == ["install", SERVE]
    assert start(checkout, "--reinstall", "--port", "9") == ["install", f"{SERVE} --port 9"]
