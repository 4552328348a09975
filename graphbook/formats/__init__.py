"""Workflow files in formats other than the canonical one (graphbook/workflow.py), read as it:
graphbook013.py reads Graphbook 0.13's workflow files."""
