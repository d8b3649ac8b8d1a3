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

# The compiler verifies the IR it generates after every internal step under the tests only
# (glow_mlir.ir.text.VERIFY_EACH_STEP_ENV: that cost a fifth of a ResNet-18 compile).
os.environ.setdefault("GLOW_MLIR_VERIFY_EACH_STEP", "1")
