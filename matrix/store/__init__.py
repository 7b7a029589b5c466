"""Stored measurements: the local results directory (``results``) and the committed, growing history (``dataset``)."""
