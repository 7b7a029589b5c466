"""Families: what a family is (``base``), where they are found (``registry``: the entry-point
group ``compat_matrix.families``), and the built-in ones, each in its own sub-package."""
