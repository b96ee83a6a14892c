"""Per-viewer projections: what of each event and state a viewer may see."""
