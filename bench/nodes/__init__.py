"""The benchmarks' node files, loaded with `--nodes bench/nodes`."""
