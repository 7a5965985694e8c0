"""tocha.export: filled in by the graph-mode work (issue 21)."""
