"""Curation: filter by expression, route by field, limit, sample, split, exact and near-duplicate
removal, field edits.

Every node here changes only the dict it hands on (the fields its docstring names), never a
file. Where randomness is involved it comes from the node's `seed`, so a run is repeatable.

The pack's modules, by the kind of work: routing.py (filter, route, limit), sampling.py (sample,
split), duplicates.py (exact duplicates: equal fields, equal bytes), near_duplicates.py (images
that look alike, embeddings that point alike), fields.py (reading fields; setting, renaming,
dropping and keeping them).
"""

CATEGORY = "Curation"
