"""Datasets on disk: Hugging Face datasets (saved or in the local cache, offline) and torchvision
datasets from a local root.
"""
