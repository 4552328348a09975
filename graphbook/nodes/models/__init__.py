"""Models: resources for torchvision, TorchScript, ONNX and Hugging Face models, and the steps
that use them (classify, embed, caption, apply).

A model resource's value is the model itself; the engine puts a torch module in eval mode on
the device of its `device` parameter, and on the CPU runs it on per-core slices of each batch
(graphbook/engine/devices.py). Nothing here ever downloads: weights come from a local file or
from a cache that already holds them, and a miss is an error that says where to put the file.

The steps decode images in the worker pool (graphbook.nodes.preprocess.ImageLoader: uint8 out,
through shared memory) and normalise each batch on the model's device.

The pack's modules: resources.py (torchvision, TorchScript and ONNX models), weights.py
(architectures built, weights read and checked), huggingface.py (Hugging Face pipelines and
CaptionImages), classify.py, embed.py and apply.py (the steps). Their base, ImageBatchStep, is
graphbook/nodes/inference.py.
"""
