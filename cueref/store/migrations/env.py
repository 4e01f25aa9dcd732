"""Alembic's environment for the match store: run programmatically by ``cueref.store.db.migrate``,
which hands over an open connection (``config.attributes["connection"]``); there is no alembic.ini.

SQLite cannot alter most of a table in place, so migrations run in batch mode (copy and move)."""

from alembic import context

from cueref.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the cueref store migrations run through cueref.store.db.migrate (a connection is required)")
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
