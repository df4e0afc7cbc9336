pytest_plugins = ["needle_lib.plugin"]
