"""IR-SIM behaviours (placeholder while building)."""
