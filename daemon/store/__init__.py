"""The SQL store: models, engine and sessions, repository functions, migrations."""
