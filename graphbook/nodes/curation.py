"""Curation: filter by expression, route by field, limit, sample, split, exact and near-duplicate
removal, field edits.
"""
