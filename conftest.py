"""Root conftest: loads the kit's pytest plugin (grader/plugin/__init__.py says what it adds) and
pytester, which the tooling's own tests (grader/tests/) use."""

pytest_plugins = ["grader.plugin", "pytester"]
