"""Image nodes in Graphbook 0.13's style: `from graphbook import utils`, `utils.image(...)`."""

from PIL import Image, ImageOps

from graphbook import output, param, source, step, utils
from graphbook.core.utils import image


@step("Custom/Pictures")
@source()
@param("count", type="number", default=3)
def pictures(ctx):
    """Makes `count` small coloured pictures in memory."""
    for i in range(int(ctx.count)):
        yield {"image": Image.new("RGB", (16, 8), (40 * i, 100, 200)), "index": i}


@step("Custom/Grayscale")
@output("out")
def grayscale(ctx, data):
    data["img"] = utils.image(ImageOps.grayscale(data["image"]))


@step("Custom/Mirror")
def mirror(ctx, data):
    data["img"] = image(ImageOps.mirror(data["img"]["value"]))
