"""The durable-work runtime that the batch API (graphbook.batch_process) and the Trainer
(graphbook.trainer) both run on: checkpoint folders committed atomically and recovered after a
crash, the lock on a run's name, what identifies its data, stop signals, ranks and their
collectives, moving batches to the device, metric reducers and their state, and a clean stop
with exit status 75. It knows neither API; each imports what it needs from here."""
