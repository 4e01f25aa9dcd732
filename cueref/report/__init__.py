"""What a refereed match is reviewed with: the annotated video (``annotate``), the per-shot table
diagrams (``diagram``), the HTML review report (``page``), how calls read (``calls``), and the
consumer the referee writes them all through (``outputs.MatchOutputs``). See ``docs/report.md``."""
