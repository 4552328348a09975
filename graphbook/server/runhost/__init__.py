"""The run host: the child process served runs execute in. parent.py is the server's side
(RunHost), child.py the process's own (RunHostChild), messages.py what they say to each other."""
