"""cosmo-python: every release of ``cosmo-ai-sdk`` (PyPI, import ``cosmo_ai``) against a local
stand-in of the Cosmo backend (its real backend is not reachable here) that follows the wire
contract cosmo-ai-sdk's own source implements, and is as strict about inbound keys as Cosmo's
design says the real server is. Each release × each check of the design's promises is a
cell; the closed sets a release's own models declare become checks of their own."""
