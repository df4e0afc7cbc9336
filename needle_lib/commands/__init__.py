"""`needle` subcommands: one module per command, each exposing ``register(subparsers)``.

``register`` adds its parser and sets ``func`` (``args -> exit code``) as a default, so the
entry point stays a dispatcher and a new command is one module plus one line in
``COMMAND_MODULES``.
"""

COMMAND_MODULES: list[str] = [
    "needle_lib.commands.extract",
    "needle_lib.commands.rescore",
    "needle_lib.commands.status",
    "needle_lib.commands.engines",
    "needle_lib.commands.novel",
    "needle_lib.commands.dashboard",
    "needle_lib.commands.compare",
    "needle_lib.commands.export",
    "needle_lib.commands.judge_agreement",
    "needle_lib.commands.finance",
    "needle_lib.commands.merge",
    "needle_lib.commands.legal",
    "needle_lib.commands.news",
    "needle_lib.commands.agentic_rare",
    "needle_lib.commands.scholar",
    "needle_lib.commands.publish",
    "needle_lib.commands.schedule",
    "needle_lib.commands.serve",
]
