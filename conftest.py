"""Root conftest: loads the kit's pytest plugin (grader/harness.py says what it adds) and
pytester, which the harness's own tests (grader/tests/) use."""

pytest_plugins = ["grader.plugin", "pytester"]
