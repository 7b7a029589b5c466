"""The session probe: one real conversation through a Copilot SDK release and a CLI release,
its model a scripted stand-in on 127.0.0.1 (``model_standin``)."""
