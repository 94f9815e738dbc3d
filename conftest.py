"""Root conftest: loads the kit's pytest plugin (grader/plugin/__init__.py says what it adds) and
pytester, which the tooling's own tests (grader/tests/) use."""


def pytest_addhooks(pluginmanager) -> None:
    # By import name, not through `pytest_plugins`: pytest would search every installed
    # distribution's entry points for each name listed there (and for pytester's own), in every
    # run, and none of these is an entry point's name.
    for name in ("grader.plugin", "pytester_assertions", "pytester"):
        pluginmanager.import_plugin(name)
