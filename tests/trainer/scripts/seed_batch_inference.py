# batch_inference.py

from seed_train import OneVarPytorchTrial, OnesDataset
from uploads import my_upload_fn

import torch
from torch import nn

import graphbook.det as det
import graphbook.det.pytorch

context = det.pytorch.init()

# you can access values from your config's .data field
# which is just a dictionary of arbitrary user data
trial_id = context.config_data["trial_id"]

# load a trial from a checkpoint
my_trial = context.load_checkpoint_trial(OneVarPytorchTrial, trial_id=trial_id)

# You are still free to shard your batch_size but since we are not training
# there isn't any particular need to.
batch_size = context.config_data["batch_size"]

# build a dataset, same as for training
pred_data = det.pytorch.DataLoader(OnesDataset(), batch_size=batch_size)

predictions = context.predict(my_trial, pred_data)

# you'll want to upload your predictions to somewhere persistent
my_upload_fn(predictions)
