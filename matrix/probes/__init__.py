"""What every probe shares: the agent protocol (one versioned JSON report an agent prints,
``report``) and the verdict helpers every family's classification uses (``verdict``)."""
