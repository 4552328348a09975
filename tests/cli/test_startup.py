"""`graphbook run workflows/hello.json` imports neither torch nor the node
files the workflow does not use; the node library and the examples' nodes, which every run
registers, import torch, PIL and pyarrow only when one of their nodes runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import sys; from graphbook.cli import main; code = main(sys.argv[1:]); "
    "print('torch' in sys.modules, 'graphbook_nodes.heavy' in sys.modules, "
    "'PIL' in sys.modules or 'pyarrow' in sys.modules, code)"
)


def run(folder: Path, *argv: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_hello_imports_neither_torch_nor_the_nodes_it_does_not_use(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "custom_nodes", tmp_path / "custom_nodes")
    shutil.copytree(ROOT / "workflows", tmp_path / "workflows")
    heavy = "import torch\nfrom graphbook import step\n@step('Heavy/Node')\ndef n(ctx, d): pass\n"
    (tmp_path / "custom_nodes" / "heavy.py").write_text(heavy)
    assert run(tmp_path, "run", "workflows/hello.json", "--quiet") == "False False False 0"
    again = run(tmp_path, "run", "workflows/hello.json", "--quiet")
    assert again == "False False False 0", "cached"
