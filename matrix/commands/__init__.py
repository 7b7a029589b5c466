"""The command line: argument parsing and one module per group of commands; each calls the layers below and prints."""
