"""coflowopt.bench (being built)."""
