"""Small self-contained example models and data generators used by example workflows."""
