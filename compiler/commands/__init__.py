"""CLI subcommands, one module each, imported lazily by prosec.compiler.cli."""
