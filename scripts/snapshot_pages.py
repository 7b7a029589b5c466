"""Write every generated page (Markdown, feed, API, reproduction scripts) of a dataset into DIR,
so a restructuring of the page code can be shown to change no page: snapshot before, snapshot
after, ``diff -r``. Pictures and the data twin are left out (they do not come from page code).

    python scripts/snapshot_pages.py --data data OUT_DIR      (--data "": no committed history)
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from matrix.site import build
from matrix.store.dataset import Sources


def _no_twin(frame: object, out: Path, generated_at: str, inputs: object) -> tuple[Path, str, object]:
    """What makes the twin goes to a drawing process: a function it can import, doing nothing."""
    out.mkdir(parents=True, exist_ok=True)
    return out / "matrix.json", "", Path.exists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help='the committed history ("": none)')
    parser.add_argument("--results", type=Path, default=Path("/nonexistent-results"))
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    # Pictures and the twin are not page code; skipping them keeps a snapshot quick.
    build._start_pictures = lambda frame, assets, pool: []  # type: ignore[assignment]
    build._data_twin = _no_twin  # type: ignore[assignment]
    t0 = time.monotonic()
    pages, _ = build._generate(Sources(args.results, Path(args.data) if args.data else None), args.out)
    print(f"{pages} pages written to {args.out} in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
