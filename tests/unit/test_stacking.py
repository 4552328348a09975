"""stack(): a batch's loaded values as one tensor, without a copy when they share a slab."""

import numpy as np
import pytest
import torch

from graphbook.stacking import Loaded, stack


def test_tensors_stack_along_a_new_first_dimension() -> None:
    values = [torch.full((3, 2), i) for i in range(4)]
    assert torch.equal(stack(values), torch.stack(values))


def test_a_loaded_list_with_its_stacked_form_returns_it_without_copying() -> None:
    slab = torch.arange(12).view(4, 3)
    values = Loaded(list(slab), stacked=slab)
    assert stack(values) is slab
    assert values[2].data_ptr() == slab[2].data_ptr()


def test_structures_stack_field_by_field() -> None:
    values = [{"image": np.full((2,), i), "label": (i, float(i))} for i in range(3)]
    stacked = stack(values)
    assert stacked["image"].shape == (3, 2)
    assert torch.equal(stacked["label"][0], torch.tensor([0, 1, 2]))


def test_what_cannot_be_stacked_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match="takes tensors, NumPy arrays"):
        stack([object()])
    with pytest.raises(ValueError, match="empty batch"):
        stack([])
