"""Settings for the test suite: the normal settings with TESTING on (insecure key, plain static storage)."""

import os

os.environ["TESTING"] = "True"

from sizer_site.settings import *  # noqa: E402,F403

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405 - WhiteNoise warns about a missing STATIC_ROOT
