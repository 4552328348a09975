"""The node-file index, and loading only the files a workflow needs."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from graphbook.node_index import INDEX_FILE, NodeIndex, declared_names
from graphbook.nodes import library_registry

HELLO = textwrap.dedent(
    """
    from graphbook import source, step

    @step("Demo/Hello")
    @source()
    def hello(ctx):
        yield {"n": 1}
    """
)
HEAVY = textwrap.dedent(
    """
    from pathlib import Path
    from graphbook.steps import Step

    Path(__file__).with_suffix(".imported").write_text("yes")

    class Heavy(Step):
        pass
    """
)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_names_are_read_from_the_syntax_without_importing(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mixed.py",
        textwrap.dedent(
            """
            import graphbook as gb
            from graphbook import resource, step

            class Loader(Step):
                pass

            @step("Cat/Sub/Shout")
            def shout(ctx, data): ...

            @gb.step()
            def plain(ctx, data): ...

            @resource(name="Model")
            def model(ctx): ...

            def helper(): ...

            late = step("Late")(helper)
            """
        ),
    )
    assert declared_names(path) == {"Loader", "Shout", "plain", "Model", "Late"}
    assert declared_names(write(tmp_path, "broken.py", "def (")) == set()


def test_only_the_files_defining_needed_nodes_are_imported(tmp_path: Path) -> None:
    write(tmp_path, "hello.py", HELLO)
    write(tmp_path, "heavy.py", HEAVY)
    registry = library_registry()
    registry.load_needed([tmp_path], {"Hello", "Split"})
    assert "Hello" in registry and "Heavy" not in registry
    assert not (tmp_path / "heavy.imported").exists(), "heavy.py was imported"
    registry.load_needed([tmp_path], {"Heavy"})
    assert "Heavy" in registry and (tmp_path / "heavy.imported").exists()


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = write(tmp_path, "hello.py", HELLO)
    assert NodeIndex(tmp_path).names(path) == {"Hello"}
    index = NodeIndex(tmp_path)
    index.names(path)
    index.save()
    assert (tmp_path / INDEX_FILE).is_file()
    path.write_text(HELLO.replace("Demo/Hello", "Demo/Goodbye"))
    os.utime(path, ns=(1, 1))  # even with an old mtime: the size changed
    assert NodeIndex(tmp_path).names(path) == {"Goodbye"}
    registry = library_registry()
    registry.load_needed([tmp_path], {"Goodbye"})
    assert "Goodbye" in registry


def test_a_node_the_index_cannot_see_is_found_by_importing_everything(tmp_path: Path) -> None:
    write(tmp_path, "heavy.py", HEAVY)
    write(
        tmp_path,
        "made.py",
        "from graphbook.steps import Step\n\nMade = type('Made', (Step,), {})\n",
    )
    registry = library_registry()
    registry.load_needed([tmp_path], {"Made"})
    assert "Made" in registry, "the fallback imported every file"
    (tmp_path / "heavy.imported").unlink()
    again = library_registry()
    again.load_needed([tmp_path], {"Made"})
    assert "Made" in again
    assert not (tmp_path / "heavy.imported").exists(), "the index learnt where Made is"


def test_an_unknown_node_loads_everything_so_the_error_can_suggest(tmp_path: Path) -> None:
    write(tmp_path, "hello.py", HELLO)
    write(tmp_path, "broken.py", "raise RuntimeError('broken on purpose')\n")
    registry = library_registry()
    registry.load_needed([tmp_path], {"Helo"})
    assert "Hello" in registry
    assert any("broken on purpose" in f.error for f in registry.failures.values())
    assert "'Hello'" in registry.suggest("Helo")


def test_a_read_only_folder_still_loads(tmp_path: Path) -> None:
    write(tmp_path, "hello.py", HELLO)
    (tmp_path / "__pycache__").write_text("a file where the cache folder would be")
    registry = library_registry()
    registry.load_needed([tmp_path], {"Hello"})
    assert "Hello" in registry
