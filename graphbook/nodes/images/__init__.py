"""Images: per-image statistics (size, brightness, blur), thumbnails, and image folders as sinks.

Every node here is a batch step whose work (decoding, measuring, writing files) runs in the
worker pool: its `load_fn` is an instance of a module-level class, so it pickles, and what
comes back is small (a few numbers, a path). A JPEG is decoded at reduced size (PIL's draft
mode: 1/2, 1/4 or 1/8 scale, straight from the compressed data) whenever a small picture is
all a node needs, which is most of the time for camera-sized photos.

Results go on the dict when it holds one image under `item_key`, on each image's record when
it holds a list of them (graphbook.nodes.common). An image that cannot be read fails its item,
or with `on_error` "skip" is dropped (from its dict's list, or the whole dict when it was its
only image), logged and counted.

The pack's modules: codec.py (opening and saving image files), items.py (what the steps share:
the work run in the pool, where results go, images skipped), measures.py (ImageStats,
ImageHash), thumbnails.py (Thumbnails), sinks.py (WriteImageFolder).
"""
