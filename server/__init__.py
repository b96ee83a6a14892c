"""The thin shell: authenticates, appends to Redis, tails the log, pushes projections."""
