"""Everything printed for people: verdicts as text and JSON (``verdict``),
kube-scheduler style explanations (``explain``), narrated witnesses
(``narrate``) and the progress line on stderr (``progress``)."""
