"""`graphbook.batch`: the batch-processing API under the import path of the seeds
(`from graphbook.batch import torch_batch_process`), which is also the `@batch` decorator.

Seed 004 writes `from graphbook import step, batch`; importing this module makes Python set
`graphbook.batch` to the module, so the module itself decorates when called.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from graphbook import batch_process as _api
from graphbook.batch_process import *  # noqa: F403  (the API, under the seeds' path)
from graphbook.decorators import batch as _batch_decorator

__all__ = _api.__all__


class _DecoratingModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _batch_decorator(*args, **kwargs)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled by name, like any module (node functions sent to workers refer to it)."""
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _DecoratingModule
