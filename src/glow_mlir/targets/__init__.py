"""Execution targets: the reference interpreter; later cpu and accel."""
