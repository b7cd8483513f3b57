"""What a table says about itself: projection, diagnostics of under-trained rows, evaluation,
trajectories through checkpoints, drift between versions.

Imports service.engine.search and below.
"""
