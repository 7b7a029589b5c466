"""One run: the config, the cells each phase plans, the runner that measures them, shards, and
the run's explicit sequence of steps (``workflow``)."""
