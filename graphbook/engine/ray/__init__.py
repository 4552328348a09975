"""Graphbook on Ray: the Ray pool, its actors, and the stage actors of batch steps."""
