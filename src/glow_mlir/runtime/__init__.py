"""Running compiled models: `CompiledModel` (numpy in, numpy out) and the registry of
execution backends behind it; the multi-device runtime (`HostManager`, `Device`,
`DeviceManager`: README "The runtime"), imported on first use so that loading a saved
model imports none of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glow_mlir.runtime.device_manager import DeviceManager
    from glow_mlir.runtime.devices import Device
    from glow_mlir.runtime.host_manager import HostManager, RequestRefused
    from glow_mlir.runtime.ray_devices import DeviceLost

_LAZY = {"Device": "devices", "DeviceManager": "device_manager", "HostManager": "host_manager",
         "RequestRefused": "host_manager", "DeviceLost": "ray_devices"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'glow_mlir.runtime' has no attribute '{name}'")
    import importlib

    return getattr(importlib.import_module(f"glow_mlir.runtime.{module}"), name)


__all__ = ["Device", "DeviceLost", "DeviceManager", "HostManager", "RequestRefused"]
