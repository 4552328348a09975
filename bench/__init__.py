"""Benchmarks that print figures: `python -m bench [--quick]`; see bench/README.md."""
