"""Tests of graphbook.batch_process: torch_batch_process, checkpoints, resume and the store."""
