"""The command line: argument parsing and terminal output live only here."""
