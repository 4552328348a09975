"""Every benchmark, one after another: `python -m bench [--quick]` (about 15 minutes; quick
under 2 on a quiet machine). Each prints its figures as a Markdown table."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from bench import images, memory, overhead, pool, preview


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in ([], ["--quick"]):
        sys.exit("usage: python -m bench [--quick]")
    start = time.perf_counter()
    for benchmark in (overhead, pool, images, memory, preview):
        benchmark.main(args)
        print(flush=True)
    print(f"all benchmarks: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
