"""The cosmo-python family: a local stand-in for the Cosmo backend (its real backend is
not reachable here) that follows the wire contract cosmo-ai-sdk's own source implements,
and is as strict about inbound keys as Cosmo's design says the real server is."""
