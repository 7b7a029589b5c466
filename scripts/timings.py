"""Print the timing figures of a measured matrix: per cell (by outcome), per environment
install (from the cache's fingerprint files) and the cache's size.

    .venv/bin/python scripts/timings.py [--results results]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from matrix.execute.cache import cache_root, dir_size
from matrix.execute.environment import FINGERPRINT
from matrix.store.results import load_frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", default="results")
    args = parser.parse_args()
    frame, _ = load_frame(Path(args.results))
    measured = frame[~frame["outcome"].isin(["uninstallable", "infra-error"])]
    print(f"cells: {len(frame)} ({len(measured)} probed)")
    print("seconds per probed cell: "
          f"median {measured['seconds'].median():.1f}, mean {measured['seconds'].mean():.1f}, "
          f"max {measured['seconds'].max():.1f}, sum {measured['seconds'].sum():.0f}")
    print(measured.groupby("outcome")["seconds"].describe()[["count", "50%", "max"]].round(1).to_string())
    connected = measured[measured["outcome"].isin(["compatible", "degraded"])]
    if len(connected):
        print(f"start() median {connected['start_seconds'].median():.2f}s, "
              f"stop() median {connected['stop_seconds'].median():.2f}s")
    envs = cache_root() / "envs"
    for side in ("sdk", "cli", "runtime"):
        infos = [json.loads(p.read_text()) for p in envs.glob(f"{side}/*/*/{FINGERPRINT}")]
        if infos:
            secs = sorted(i["seconds"] for i in infos)
            size = sum(i["bytes"] for i in infos) / 1e9
            print(f"{side} environments: {len(infos)}, install seconds median {secs[len(secs) // 2]:.1f} "
                  f"max {secs[-1]:.1f}, {size:.2f} GB")
    print(f"cache {cache_root()}: {dir_size(cache_root()) / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
