"""push_envs: 2D robot pushing tasks on a batch-first compiled contact engine."""
