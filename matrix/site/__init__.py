"""The static site: generated pages, heatmaps, notebooks executed against the results, the data
files, and the MkDocs build."""
