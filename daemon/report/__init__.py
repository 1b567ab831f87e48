"""`jupcron report`: what the money did, per plan (and a chart of it)."""
