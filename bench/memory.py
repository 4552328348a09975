"""Memory: peak memory of the whole process tree of `graphbook run` on the image pipeline as a
person writes it (the plain workflow, mobilenet_v3_small, 2 workers), against the dataset's size
and against the batch size.

    python -m bench.memory [--quick] [--counts 2000 20000] [--batch-sizes 16 32 64 [--images N]]

Memory is the peak of the summed PSS of the CLI process and its workers, sampled every 50 ms
(PSS splits pages shared after fork between the processes, so they are counted once).

* Against the dataset's size (`--counts`): a run that streams holds the same dicts, tensors and
  batches in flight whatever the count, so the two peaks should be equal.
* Against the batch size (`--batch-sizes`, on `--images` images): what the engine holds in
  flight is counted in batches (a batch step's lane holds twice its batch size, loading or
  loaded; the batch being run; its outputs waiting for dump_fn). *Decoded images alive* is the
  most shared memory segments alive at once: a worker lends the segment a decoded image is in,
  whose name stays until the parent lets go of the image, so this counts the images in flight,
  waiting for their batch and in the batch being run, and the spare segments workers keep to
  write again; over the batch size, how many batches ahead the run holds ("no more than a few").
  The slope of the peak PSS against the batch size, over one decoded image (3x224x224 float32,
  0.57 MiB), counts the rest that grows with the batch too: the model's activations (about 4.5
  images' worth per image for mobilenet_v3_small), the stacked batch and the allocator's cache.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from bench.common import OUT, machine, table
from bench.images import graphbook, image_folder

MODEL = "mobilenet_v3_small"
COUNTS = (2000, 20000)
QUICK_COUNTS = (256, 2560)
BATCH_SIZES = (16, 32, 64)
SWEEP_IMAGES = 1000
QUICK_SWEEP_IMAGES = 256
IMAGE_MB = 3 * 224 * 224 * 4 / 2**20
"""One decoded image, as load_image makes it."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_COUNTS} images")
    parser.add_argument("--counts", type=int, nargs=2, metavar="N", help=f"default {COUNTS}")
    parser.add_argument("--batch-sizes", type=int, nargs="+", metavar="B",
                        help=f"default {BATCH_SIZES}; 0 skips the sweep")  # fmt: skip
    parser.add_argument("--images", type=int, help=f"images per sweep run ({SWEEP_IMAGES})")
    parser.add_argument("--no-counts", action="store_true", help="only the batch-size sweep")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"memory, {machine()}, {MODEL}", flush=True)
    if not args.no_counts:
        against_counts(args.counts or (QUICK_COUNTS if args.quick else COUNTS))
    sizes = [b for b in (args.batch_sizes or BATCH_SIZES) if b > 0]
    if len(sizes) >= 2:
        images = args.images or (QUICK_SWEEP_IMAGES if args.quick else SWEEP_IMAGES)
        against_batch_sizes(sizes, images)


def against_counts(counts: Sequence[int]) -> None:
    rows = []
    peaks = []
    for count in counts:
        out = OUT / "top5-memory.jsonl"
        measured = graphbook(MODEL, image_folder(count), out, "plain", memory=True)
        peaks.append(measured.peak_mb)
        rows.append([count, f"{measured.peak_mb:,.0f}", f"{count / measured.wall:,.1f}",
                     measured.others])  # fmt: skip
        print(f"  {count} images: peak {measured.peak_mb:,.0f} MB", flush=True)
    print(table(["images", "peak tree PSS MB", "images/s (whole CLI)", "others' load"], rows))
    print(f"peak with {counts[1]:,} / peak with {counts[0]:,}: {peaks[1] / peaks[0]:.3f}")


def against_batch_sizes(sizes: Sequence[int], images: int) -> None:
    folder = image_folder(images)
    peaks = []
    rows = []
    for size in sizes:
        out = OUT / "top5-memory.jsonl"
        measured = graphbook(MODEL, folder, out, "plain", memory=True, batch_size=size)
        peaks.append(measured.peak_mb)
        alive = measured.peak_segments
        rows.append([size, f"{measured.peak_mb:,.0f}", alive, f"{alive / size:.1f}"])
        print(f"  batch size {size}: peak {measured.peak_mb:,.0f} MB, {alive} decoded images "
              "alive at most", flush=True)  # fmt: skip
    slope = statistics.linear_regression(sizes, peaks).slope
    print(table(["batch size", f"peak tree PSS MB ({images} images)", "decoded images alive",
                 "in batches"], rows))  # fmt: skip
    print(f"peak grows by {slope:.2f} MB per image of batch size: "
          f"{slope / IMAGE_MB:.1f} decoded images' worth ({IMAGE_MB:.2f} MB each) per image of "
          "batch size, the model's activations and the allocator's cache included")  # fmt: skip


if __name__ == "__main__":
    main()
