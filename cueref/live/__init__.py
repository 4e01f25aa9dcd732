"""Live refereeing (``cueref live``): a camera, a stream or a file played at real speed in
(:mod:`.source`), the pipeline refereeing continuously, and the operator's console and the scoreboard
served to a browser (:mod:`.server`), fed by the session that joins them (:mod:`.session`).
See ``docs/live.md``."""
