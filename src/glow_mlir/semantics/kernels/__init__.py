"""Reference kernels by concept; importing this package registers every kernel module in
it, then (`scalar_bodies`, last) a kernel for every op with a `ScalarBody` and no kernel of
its own."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "scalar_bodies":
        importlib.import_module(f"{__name__}.{_module.name}")
importlib.import_module(f"{__name__}.scalar_bodies")
