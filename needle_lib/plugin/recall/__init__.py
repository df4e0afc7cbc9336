"""The recall half of the plugin: the plan of cases, the dispatcher that asks ahead,
``--resume`` and the controller-side dumps."""
