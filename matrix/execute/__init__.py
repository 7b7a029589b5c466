"""Running third-party code safely: processes and their groups, sandboxes, environments and
their cache, warm imports, scheduling, storage and locks."""
