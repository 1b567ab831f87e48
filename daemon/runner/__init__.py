"""The run: one fire of one plan, driven through DESIGN §2's states."""
