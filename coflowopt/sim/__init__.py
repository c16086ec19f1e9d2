"""coflowopt.sim (being built)."""
