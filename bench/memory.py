"""Memory: peak memory of the whole process tree of `graphbook run` on the image pipeline as a
person writes it (the plain workflow), with 2,000 and with 20,000 images (mobilenet_v3_small,
2 workers).

    python -m bench.memory [--quick] [--counts 2000 20000]

Memory is the peak of the summed PSS of the CLI process and its workers, sampled every 50 ms
(PSS splits pages shared after fork between the processes, so they are counted once). A run
that streams holds the same dicts, tensors and batches in flight whatever the count.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.common import OUT, machine, table
from bench.images import graphbook, image_folder

MODEL = "mobilenet_v3_small"
COUNTS = (2000, 20000)
QUICK_COUNTS = (256, 2560)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_COUNTS} images")
    parser.add_argument("--counts", type=int, nargs=2, metavar="N", help=f"default {COUNTS}")
    args = parser.parse_args(argv)
    counts = args.counts or (QUICK_COUNTS if args.quick else COUNTS)
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"memory, {machine()}, {MODEL}", flush=True)
    rows = []
    peaks = []
    for count in counts:
        out = OUT / "top5-memory.jsonl"
        measured = graphbook(MODEL, image_folder(count), out, "plain", memory=True)
        peaks.append(measured.peak_mb)
        rows.append([count, f"{measured.peak_mb:,.0f}", f"{count / measured.wall:,.1f}"])
        print(f"  {count} images: peak {measured.peak_mb:,.0f} MB", flush=True)
    print(table(["images", "peak tree PSS MB", "images/s (whole CLI)"], rows))
    print(f"peak with {counts[1]:,} / peak with {counts[0]:,}: {peaks[1] / peaks[0]:.3f}")


if __name__ == "__main__":
    main()
