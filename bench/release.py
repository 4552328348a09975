"""A wheel of this checkout installed in a fresh virtual environment: what `pip install graphbook`
gives a person, for the release smoke test (tests/release/) and `python -m bench.startup
--wheel`.

The environment is fresh where Graphbook is concerned and borrows the rest. It is a venv
*without* the system's site-packages: with them, the checkout's editable install would come
along (setuptools installs it as a .pth file there that adds an import hook leading to the
checkout). Instead a .pth file of the venv's own names the folders where this Python finds
Graphbook's dependencies (torch, aiohttp, ... and theirs), so nothing gigabyte-sized is
installed again. A line of a .pth file that names a folder only puts it on sys.path: the .pth
files inside that folder, the editable install's among them, are not run, and the venv's own
site-packages, where the wheel is, comes first on sys.path.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EDITOR = ROOT / "graphbook" / "webapp" / "index.html"
SOURCES = ("pyproject.toml", "README.md", "graphbook")
"""What a wheel is built from (the package's files and what pyproject.toml reads)."""
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


class NoEditor(RuntimeError):
    """The editor is not built into graphbook/webapp/, so a wheel would not carry it."""


def build_wheel(out: Path) -> Path:
    """A wheel of the checkout as it is (the editor as built in graphbook/webapp/), in `out`.

    It is built from a copy of the package's sources, so that setuptools leaves no build/ or
    .egg-info in the checkout and takes no stale file from an old build/. `scripts/release`
    builds releases; this is the same package, built faster (no npm, no isolated build)."""
    if not EDITOR.is_file():
        raise NoEditor(
            f"{EDITOR.parent} has no built editor (index.html), so the wheel would carry none: "
            "build it first with `npm ci && npm run build` (scripts/install does)"
        )
    source = out / "source"
    source.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
               "--disable-pip-version-check", "--quiet", "--wheel-dir", str(out),
               str(source)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip wheel failed:\n{done.stdout}\n{done.stderr}")
    return next(out.glob("graphbook-*.whl"))


def requirements(wheel: Path) -> list[str]:
    """The names of the distributions the wheel requires (not those of its extras)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(name).decode().splitlines()
    needed = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]
    return [_name(each) for each in needed if "extra ==" not in each]


def dependency_folders(names: list[str]) -> list[Path]:
    """The folders this Python finds the distributions `names` and all that they require in."""
    folders: list[Path] = []
    seen: set[str] = set()
    todo = [(name, True) for name in names]
    while todo:
        name, required = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if required:
                raise RuntimeError(f"{name}, which Graphbook needs, is not installed") from None
            continue  # a requirement of a dependency that its markers leave out here
        folder = Path(str(dist.locate_file(""))).resolve()
        if folder not in folders:
            folders.append(folder)
        for each in dist.requires or []:
            if "extra ==" not in each:
                todo.append((_name(each), False))
    return folders


def fresh_venv(wheel: Path, folder: Path) -> Path:
    """A venv in `folder` with the wheel installed and this Python's copies of its
    dependencies on its path; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    # pip runs for the venv's python (it has none of its own), before the .pth below exists:
    # with it, pip would take the checkout's editable install for Graphbook already installed
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
               "--no-index", "--disable-pip-version-check", "--quiet", str(wheel)]  # fmt: skip
    done = subprocess.run(install, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip install of {wheel.name} failed:\n{done.stdout}\n{done.stderr}")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    folders = [f for f in dependency_folders(requirements(wheel)) if not f.is_relative_to(ROOT)]
    (Path(site) / "graphbook_dependencies.pth").write_text("".join(f"{f}\n" for f in folders))
    return python


def _name(requirement: str) -> str:
    found = NAME.match(requirement.strip())
    if found is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return found.group(0)
