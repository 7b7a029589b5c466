"""The site's pages from its templates (``templates/`` beside this module)."""

from matrix.render import renderer

__all__ = ["render"]

render = renderer(__package__ or "matrix.site")
