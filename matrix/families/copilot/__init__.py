"""The Copilot families: one SDK per language against the ``@github/copilot`` CLI. What they
share (the CLI's install and runtime, the launcher, the handshake and tolerance probes and
their classification, the shim, their pages) is here; each language's agents and measuring
code are in its sub-package."""
