"""The package people install. A wheel of this checkout, installed in a fresh virtual
environment (bench/release.py: Graphbook from the wheel, its dependencies borrowed from this
Python), run with no Node.js on PATH and no checkout in sight, serves the built editor with the
built-in nodes, runs a template headless, and reports the version it was built as.

It builds the wheel from graphbook/webapp/ as built (scripts/install builds it) and fails
saying so when the editor is not built. GRAPHBOOK_SKIP_RELEASE=1 skips it (about 20 s).
How long `import graphbook` takes from the wheel and from the checkout: `python -m
bench.startup --wheel`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.release import ROOT, NoEditor, build_wheel, fresh_venv
from graphbook.templates import TEMPLATES

pytestmark = [
    pytest.mark.release,
    pytest.mark.skipif(
        os.environ.get("GRAPHBOOK_SKIP_RELEASE") == "1", reason="GRAPHBOOK_SKIP_RELEASE=1"
    ),
]
SERVING = re.compile(r"Graphbook is serving on (http://127\.0\.0\.1:\d+/)")
LIBRARY_NODES = {"ImageFolder", "ReadCSV", "WriteParquet", "Split"}


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    home: Path
    """An empty folder outside the checkout: the commands' working directory."""

    @property
    def version(self) -> str:
        return self.wheel.name.split("-")[1]

    def env(self) -> dict[str, str]:
        """The environment of a person who installed the wheel: the venv's bin/ alone on PATH
        (no node, npm or checkout scripts), nothing pointing into the checkout."""
        drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "GRAPHBOOK_HOME", "NODE_PATH")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        return {**env, "PATH": str(self.venv / "bin"), "HOME": str(self.home)}

    def run(self, *command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        program = str(self.venv / "bin" / command[0])
        return subprocess.run(
            [program, *command[1:]],
            cwd=self.home,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    folder = tmp_path_factory.mktemp("release")
    try:
        wheel = build_wheel(folder / "wheel")
    except NoEditor as exc:
        pytest.fail(str(exc))
    fresh_venv(wheel, folder / "venv")
    (folder / "home").mkdir()
    return Installed(wheel, folder / "venv", folder / "home")


def test_the_wheel_carries_the_editor_templates_weights_and_torch_as_a_range(
    installed: Installed,
) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        names = set(archive.namelist())
        meta = archive.read(f"graphbook-{installed.version}.dist-info/METADATA").decode()
    assert "graphbook/webapp/index.html" in names
    assert any(re.fullmatch(r"graphbook/webapp/assets/index-.+\.js", n) for n in names), names
    assert {f"graphbook/templates/{t.name}.json" for t in TEMPLATES} <= names
    assert "graphbook/examples/shapes_net.pt" in names
    requires = re.findall(r"^Requires-Dist: (torchvision|torch)(\S*)$", meta, re.MULTILINE)
    assert dict(requires) == {"torch": ">=2.3", "torchvision": ">=0.18"}, "ranges, not pins"


def test_graphbook_comes_from_the_wheel_without_node_or_torch(installed: Installed) -> None:
    assert shutil.which("node", path=installed.env()["PATH"]) is None
    assert shutil.which("npm", path=installed.env()["PATH"]) is None
    probe = "import sys, graphbook; print(graphbook.__file__); print('torch' in sys.modules)"
    done = installed.run("python", "-c", probe)
    assert done.returncode == 0, done.stderr
    where, torch = done.stdout.splitlines()
    assert Path(where).is_relative_to(installed.venv), f"imported from {where}, not the wheel"
    assert not Path(where).is_relative_to(ROOT)
    assert torch == "False", "import graphbook imports torch"
    version = installed.run("graphbook", "--version")
    assert (version.returncode, version.stdout) == (0, f"graphbook {installed.version}\n")


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        body: bytes = response.read()
        return body


@pytest.fixture
def server(installed: Installed) -> Iterator[str]:
    command = [str(installed.venv / "bin" / "graphbook"), "serve", "--port", "0", "--no-watch"]
    process = subprocess.Popen(
        command,
        cwd=installed.home,
        env=installed.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    try:
        line = process.stdout.readline()  # the server's first line says where it listens
        found = SERVING.search(line)
        if found is None:
            process.kill()
            pytest.fail(f"graphbook serve printed {line!r}; stderr:\n{process.communicate()[1]}")
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


def test_serve_serves_the_built_editor_and_the_built_in_nodes(
    installed: Installed, server: str
) -> None:
    page = get(server).decode()
    with zipfile.ZipFile(installed.wheel) as archive:
        assert page == archive.read("graphbook/webapp/index.html").decode()
    script = re.search(r'src="\./(assets/index-[^"]+\.js)"', page)
    assert script, page
    assert len(get(server + script.group(1))) > 10_000, "the editor's script"
    names = {node["name"] for node in json.loads(get(server + "api/catalog"))["nodes"]}
    assert names >= LIBRARY_NODES, LIBRARY_NODES - names
    info = json.loads(get(server + "api/info"))
    assert info["server"] == f"graphbook {installed.version}"


def test_a_template_from_graphbook_new_runs_headless(installed: Installed) -> None:
    made = installed.run("graphbook", "new", "wf.json", "--template", "convert-table")
    assert made.returncode == 0, made.stderr
    ran = installed.run("graphbook", "run", "wf.json", "--quiet")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (installed.home / "out" / "measurements.parquet").is_file()
