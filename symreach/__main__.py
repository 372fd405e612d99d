"""``python -m symreach`` runs the command line, as the ``symreach`` script does."""

from symreach.cli import main

main()
