"""Images: per-image statistics (size, brightness, blur), thumbnails, and image folders as sinks."""
