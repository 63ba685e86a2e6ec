"""One module per ``popverify`` subcommand; see popverify.cli."""
