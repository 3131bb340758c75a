pytest_plugins = ["cts.plugin"]
