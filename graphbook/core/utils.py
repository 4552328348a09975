"""`graphbook.core.utils`, as Graphbook 0.13 node files import it (`from graphbook.core.utils
import image`)."""

from graphbook.utils import (
    ExecutionContext,
    convert_dict_values_to_list,
    image,
    is_batchable,
    transform_function_string,
    transform_json_log,
)

__all__ = [
    "ExecutionContext",
    "convert_dict_values_to_list",
    "image",
    "is_batchable",
    "transform_function_string",
    "transform_json_log",
]
