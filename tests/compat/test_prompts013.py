"""Prompts in `graphbook run` are asked in the terminal when there is one, and take
their defaults otherwise, said once (no warning per prompt breaking the live table)."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphbook.cli import main

ROOT = Path(__file__).resolve().parents[2]


def labels(project: Path) -> list[object]:
    return [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]


def test_without_a_terminal_prompts_take_their_defaults_said_once(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["run", "Labels.json"]) == 0
    err = capsys.readouterr().err
    assert err.count("takes its default answer") == 1, err
    assert "[1] PetLabel asks 'Which pet is number 0?'; stdin is not a terminal" in err
    assert "WARNING" not in err
    assert labels(project) == [
        {"n": 0, "label": "dog", "keep": True},
        {"n": 1, "label": "dog", "keep": True},
    ]


def test_with_json_prompts_take_their_defaults(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "Labels.json", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "--json is given, so every prompt of this run takes its default" in err
    assert all(line.startswith("{") for line in out.splitlines())


def test_in_a_terminal_the_person_is_asked(project: Path) -> None:
    answers = [
        ("number 0?", "cat"),
        ("Keep number 0?", "n"),
        ("number 1?", ""),
        ("Keep number 1?", "y"),
    ]
    master, slave = pty.openpty()
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, "-m", "graphbook", "run", "Labels.json"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": path, "COLUMNS": "120", "TERM": "xterm"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    seen, deadline = "", time.monotonic() + 120
    try:
        while answers and time.monotonic() < deadline and process.poll() is None:
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 4096).decode(errors="replace")
            if answers[0][0] in seen:
                os.write(master, (answers.pop(0)[1] + "\n").encode())
                seen = ""
        assert not answers, f"not asked {answers[0][0]!r}; the terminal showed:\n{seen}"
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        os.close(master)
    assert labels(project) == [
        {"n": 0, "label": "cat", "keep": False},
        {"n": 1, "label": "dog", "keep": True},
    ]
