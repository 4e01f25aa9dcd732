"""Opening a match store: a SQLite file (the default: one file, no server) or a PostgreSQL database
(a league server), by path or URL, with the schema brought to the newest revision on open.

``store_url`` turns what a user types into a SQLAlchemy URL; ``connect`` opens the engine and runs
the Alembic migrations (``cueref/store/migrations``), so a store made by an older cueref is upgraded
in place and a store made by a newer one is refused with a message that says so.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

__all__ = ["StoreError", "DEFAULT_STORE", "store_url", "connect", "migrate", "schema_revision", "head_revision"]

log = logging.getLogger(__name__)

#: where commands keep matches when no ``--store`` is given (``$CUEREF_STORE`` overrides it): one
#: file beside the referee's output folders, so every match refereed from here is in one store
DEFAULT_STORE = Path("cueref-out") / "matches.sqlite"
MIGRATIONS = Path(__file__).with_name("migrations")


class StoreError(ValueError):
    """The store cannot be opened or does not hold what was asked for: the message says what to do."""


def store_url(location: str | os.PathLike[str] | None = None) -> str:
    """A SQLAlchemy URL for a store location: a file path (SQLite), a ``sqlite:///`` URL or a
    ``postgresql://`` URL (driven by psycopg 3). None means ``$CUEREF_STORE`` or :data:`DEFAULT_STORE`."""
    if location is None:
        location = os.environ.get("CUEREF_STORE") or DEFAULT_STORE
    text = os.fspath(location)
    if "://" not in text:
        path = Path(text).expanduser()
        if path.is_dir():
            raise StoreError(f"store {text!r} is a folder: give a file such as {path / 'matches.sqlite'} or a postgresql:// URL")
        return f"sqlite:///{path.resolve()}"
    try:
        url = make_url(text)
    except ArgumentError as e:
        raise StoreError(f"store URL {text!r} is not a database URL ({e})") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"store URL {text!r}: cueref stores matches in SQLite (a file path) or PostgreSQL (postgresql://...)")
    return url.render_as_string(hide_password=False)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")  # readers (stats, a report) do not block the referee writing
    cur.execute("PRAGMA busy_timeout=10000")
    cur.close()


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    """The newest schema revision this cueref knows."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def schema_revision(engine: Engine) -> str | None:
    """The schema revision of an open store (None: an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


@contextmanager
def _quiet_alembic() -> Iterator[None]:
    """Alembic says at INFO what it does on every open; keep that for --debug."""
    logger = logging.getLogger("alembic")
    level = logger.level
    if not log.isEnabledFor(logging.DEBUG):
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the store's schema to ``revision`` (the newest by default), in one transaction."""
    script = ScriptDirectory.from_config(_config())
    target = script.get_current_head() if revision == "head" else revision
    with _quiet_alembic():
        current = schema_revision(engine)
        if current == target:
            return
        if current is not None and not _known(script, current):
            raise StoreError(f"the store's schema is revision {current!r}, which this cueref does not know: it was made by a newer "
                             "cueref; upgrade cueref to open it")
        cfg = _config()
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    log.info("match store %s: schema %s -> %s", engine.url.render_as_string(hide_password=True), current or "empty", target)


def _known(script: ScriptDirectory, revision: str) -> bool:
    try:
        script.get_revision(revision)
        return True
    except Exception:  # alembic raises its own CommandError/ResolutionError for an unknown id
        return False


def connect(location: str | os.PathLike[str] | None = None, *, upgrade: bool = True) -> Engine:
    """An engine on the store at ``location`` (see :func:`store_url`), its schema upgraded to the
    newest revision. A SQLite file is created (with its folder) when missing."""
    url = store_url(location)
    sqlite = url.startswith("sqlite")
    if sqlite:
        Path(make_url(url).database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, pool_pre_ping=not sqlite)
    if sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
    shown = make_url(url).render_as_string(hide_password=True)
    try:
        if upgrade:
            migrate(engine)
        else:
            with _quiet_alembic():
                schema_revision(engine)
    except StoreError:
        engine.dispose()
        raise
    except SQLAlchemyError as e:
        engine.dispose()
        reason = str(getattr(e, "orig", None) or e).strip().splitlines()[0]
        raise StoreError(f"cannot open the match store {shown}: {reason}. Give --store a writable file path or a reachable "
                         "postgresql://user@host/database URL") from None
    return engine
