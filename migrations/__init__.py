"""Alembic environment and versions of the jupcron schema (SQLite and PostgreSQL)."""
