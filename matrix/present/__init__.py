"""What pages are made from, below the families and the site so both build with it: the rows of
one build and the slices asked of them (``rows.py``), runs of versions and what to pin to stay
on them (``ranges.py``), the matrix as a grid of cells (``grid.py``)."""
