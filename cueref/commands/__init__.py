"""One module per ``cueref`` subcommand, each with ``add_arguments(parser)`` and ``run(args) -> int``."""
