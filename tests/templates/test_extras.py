"""A feature whose optional extra is not installed says which extra to install (the
Ray backend's and the Hugging Face datasets node's are tested beside them, tests/engine and
tests/nodes)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from graphbook.templates.samples import make_sample


def test_without_transformers_the_hf_sample_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` fails
    with pytest.raises(ImportError, match=re.escape("pip install 'graphbook[hf]'")):
        make_sample("tiny-hf-classifier", tmp_path)
    assert not (tmp_path / "models" / "tiny-hf-classifier").exists()
