"""A throwaway PostgreSQL server for the store tests: Debian's ``postgresql`` package, started on a
temporary directory and a free local port, stopped at the end.

initdb refuses to run as root, so as root the server runs as the ``postgres`` user (``runuser``) on a
directory that user owns. :func:`start` returns None with the reason when no server can be started
(no package, no ``postgres`` user, no permission), so that the tests skip with that reason."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class PgServer:
    bindir: Path
    root: Path
    port: int
    prefix: list[str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run([*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start() -> PgServer | str:
    """A running server, or the reason none could be started."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        return "PostgreSQL is not installed (Debian package postgresql: /usr/lib/postgresql/*/bin/initdb)"
    bindir = Path(found[-1]).parent
    prefix: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="cueref-pg-"))
    if os.geteuid() == 0:  # initdb refuses root: run the server as the postgres user
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            return "running as root and there is no 'postgres' user to run initdb as"
        if shutil.which("runuser") is None:
            shutil.rmtree(root, ignore_errors=True)
            return "running as root and runuser is missing (needed to run initdb as postgres)"
        os.chown(root, pw.pw_uid, pw.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    try:
        r = subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(root / "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed: {r.stderr.strip()[-300:]}")
        r = subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(root / "data"), "-l", str(root / "server.log"), "-w", "-t", "60",
                            "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            log = (root / "server.log").read_text(errors="replace")[-300:] if (root / "server.log").exists() else r.stderr
            raise RuntimeError(f"pg_ctl start failed: {log.strip()}")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        shutil.rmtree(root, ignore_errors=True)
        return f"could not start a PostgreSQL server: {e}"
    return PgServer(bindir, root, port, prefix)
