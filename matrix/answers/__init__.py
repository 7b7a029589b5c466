"""Answers computed from the measured rows: working ranges, can-i-ship, pins and bisection,
diff, drift predictions (labelled as such), verification samples, report tables."""
