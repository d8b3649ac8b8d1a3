"""Hypothesis profiles for the whole suite.

CI (`CI=true`, as `.ci/run` and most CI services set it) runs the `ci` profile: derandomized
(each test's examples come from a seed derived from the test itself), no example database, no
deadline and no timing health check, so one commit always gives the same result on a shared,
noisy machine. Locally the `dev` profile keeps hypothesis random, so every run explores new
inputs; `HYPOTHESIS_PROFILE=ci` reproduces CI. Random exploration at scale lives in `fuzz/`.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)

_default = "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", _default))

# The generated loop IR is verified with xDSL's verifiers under the tests only (it cost ~1 s
# of a ResNet-18 compile: see conversion/loops_to_llvm.py, prepare_loops).
os.environ.setdefault("GLOW_MLIR_VERIFY_LOOPS", "1")
