"""Models: resources for torchvision, TorchScript, ONNX and Hugging Face models, and the steps
that use them (classify, embed, apply).
"""
