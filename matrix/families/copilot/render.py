"""The Copilot families' pages from their templates (``templates/`` beside this module)."""

from matrix.render import renderer

__all__ = ["render"]

render = renderer(__package__ or "matrix.families.copilot")
