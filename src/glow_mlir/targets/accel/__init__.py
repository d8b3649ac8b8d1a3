"""The accelerator target: a simulator that runs `glow_accel` programs with numpy, checks
them and counts cycles and bytes (simulator.py), its cost model (cost_model.py) and its
report (report.py)."""

from glow_mlir.targets.accel.errors import AccelSimulationError
from glow_mlir.targets.accel.report import AccelReport
from glow_mlir.targets.accel.simulator import AccelSimulator, simulate

__all__ = ["AccelSimulator", "AccelSimulationError", "AccelReport", "simulate"]
