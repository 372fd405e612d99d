"""``--cert-out`` and ``--why`` of ``check``: the evidence of a not-deployable verdict.

Kept out of ``check.py`` so that the command reads as decide-print-exit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from symreach.model import Instance, Query
from symreach.result import Result, Verdict


def not_deployable_evidence(instance: Instance, query: Query, result: Result, cert_out: Optional[Path],
                            why: bool, timeout: Optional[float]) -> Optional[str]:
    """Find the certificate (``check`` writes it to ``cert_out`` after the verdict);
    return the ``--why`` lemmas (also in ``stats``).

    Engines without evidence of their own get one from ``ensure_certificate``;
    when none can be found, stderr says so instead of writing nothing silently.
    """
    if result.verdict is not Verdict.NOT_DEPLOYABLE or (cert_out is None and not why):
        return None
    from symreach.certify.dispatch import as_certificate
    from symreach.solvers.base import Limits
    from symreach.solvers.evidence import ensure_certificate

    if "without nominations" not in result.stats:   # else no argument without them holds (cli/nominated_answers.with_nominations)
        ensure_certificate(instance, query, result, Limits(timeout_s=timeout))
    if result.certificate is None:
        what = "written" if cert_out is not None else "to explain"
        click.echo(f"symreach: no certificate {what}: {result.stats.get('certificate', 'none')}", err=True)
        return None
    # bound to this instance: ``certify`` refuses it for any other (its target is in it already)
    result.certificate = as_certificate(result.certificate).bind(instance)
    if not why:  # check writes the certificate after printing the verdict
        return None
    from symreach.certify.lemmas import result_lemmas_text

    text = result_lemmas_text(instance, result.certificate)
    moves = operator_moves_lemmas(instance, result.stats.get("blocked_by"))
    if moves:
        text = moves + "\n" + text
    result.stats["why"] = text.splitlines()
    return text


def operator_moves_lemmas(instance: Instance, blocked_by: Optional[str] = None) -> str:
    """Under operator moves, the rules that bound the witness, in the user's terms:
    the budgets (with how many pods each keeps), the protected pods, and what
    they refused of the paper's witness when that was asked (``explain_block``)."""
    rules = instance.moves
    if not rules.restricted:
        return ""
    lines = ["why (the moves allowed: deletions only as these rules permit):"]
    if blocked_by:
        lines.append(f"  - {blocked_by}")
    if rules.respect_pdb:
        for budget in instance.budgets:
            pods = ", ".join(sorted(instance.pod_types[t].name for t in budget.counts)) or "no pod type"
            lines.append(f"  - PodDisruptionBudget {budget.name} keeps at least {budget.desired_healthy} "
                         f"of {pods} running (an eviction is refused below that)")
    if rules.protected:
        names = sorted(instance.pod_types[t].name for t in rules.protected)
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        lines.append(f"  - protected, never deleted: {shown}")
    if rules.keep_replicas:
        kept = [f"{r.name} ({r.replicas})" for r in instance.replica_targets if r.replicas]
        shown = ", ".join(kept[:10]) + (f" and {len(kept) - 10} more" if len(kept) > 10 else "")
        lines.append(f"  - controllers keep their replicas at the end: {shown or 'none in the input'}")
    return "\n".join(lines)
