"""An installed Python package that defines nodes (what 0.13 files name in data.module)."""
