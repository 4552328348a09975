"""Decoding and preprocessing images in the worker pool: presets (ImageNet, none), sizes, crops;
uint8 out, normalised in the batch.
"""
