"""Option parsing shared by the commands: targets, node selectors, co-occurrence pairs.

Every command that asks a reachability question builds its ``Query`` here,
so ``check``, ``export`` and ``bench`` read ``--pod``/``--node``/
``--node-selector``/``--domain``/``--with``/``--count``/``--more`` identically.
"""

from __future__ import annotations

import functools
from typing import Optional

import click

from symreach.loader.query import MAX_COUNT
from symreach.model import Instance, Query


def parse_node_selector(text: Optional[str]) -> Optional[dict[str, str]]:
    """``K=V[,K=V...]`` as a dict; None when the option was not given."""
    if text is None:
        return None
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE[,KEY=VALUE...], got {text!r}",
                                     param_hint="--node-selector")
        out[key.strip()] = value.strip()
    return out


def parse_with(items: tuple[str, ...]) -> list[tuple[str, str]]:
    """``POD@NODE`` items of ``--with`` as (pod, node) pairs."""
    pairs = []
    for item in items:
        pod, sep, node = item.rpartition("@")
        if not sep or not pod or not node:
            raise click.BadParameter(f"expected POD@NODE, got {item!r}", param_hint="--with")
        pairs.append((pod, node))
    return pairs


def query_from_options(instance: Instance, pod: Optional[str], node: Optional[str],
                       node_selector: Optional[str], with_items: tuple[str, ...]) -> Query:
    """The command line's target, or the file's own query when no ``--pod`` is given.

    ``--count``, ``--more`` and ``--domain`` are read from the click context
    (``target_options`` puts them there), so commands keep their signatures.
    """
    from symreach.loader import parse_query

    count, more, domain = _count_options()
    if pod is None:
        if node or node_selector or with_items or domain or count is not None or more:
            raise click.UsageError("--node, --node-selector, --domain, --with, --count and --more need --pod")
        if instance.query is None:
            raise click.UsageError("the file has no query: give --pod (and --node or --node-selector)")
        return instance.query
    if sum(x is not None for x in (node, node_selector, domain)) > 1:
        raise click.UsageError("give one of --node, --node-selector and --domain")
    if count is not None and more:
        raise click.UsageError("give --count or --more, not both")
    return parse_query(instance, pod, node=node, node_selector=parse_node_selector(node_selector),
                       with_pairs=parse_with(with_items), count=count, more=more,
                       domain=parse_domain(domain))


def parse_domain(text: Optional[str]) -> Optional[tuple[str, str]]:
    """``KEY=VALUE`` of ``--domain``: one topology key and its value."""
    if text is None:
        return None
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or "," in text:
        raise click.BadParameter(f"expected KEY=VALUE (one topology key), got {text!r}", param_hint="--domain")
    return key.strip(), value.strip()


_META = "symreach.count_options"


def _count_options() -> tuple[Optional[int], bool, Optional[str]]:
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta.get(_META, {}) if ctx is not None else {}
    return meta.get("count"), bool(meta.get("more")), meta.get("domain")


def target_options(func):
    """``--pod``, ``--node``, ``--node-selector``, ``--domain``, ``--with``, ``--count``, ``--more``.

    The last three are taken off the command's arguments and kept in the
    click context for ``query_from_options``: the commands' signatures stay
    ``(pod, node, node_selector, with_items, ...)``.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        meta = {key: kwargs.pop(key) for key in ("count", "more", "domain")}
        click.get_current_context().meta[_META] = meta
        return func(*args, **kwargs)

    for option in reversed((
        click.option("--pod", help="Target pod type (name, or namespace/workload for Kubernetes dumps; "
                                   "a DaemonSet's ns/name means its pod on the target node)."),
        click.option("--node", help="Target node."),
        click.option("--node-selector", metavar="K=V[,K=V]", help="Target: any node with these labels "
                                                                  "(with --count: pods summed over them)."),
        click.option("--domain", metavar="KEY=VALUE",
                     help="Target: the topology domain of nodes labelled KEY=VALUE (pods summed over it)."),
        click.option("--with", "with_items", multiple=True, metavar="POD@NODE",
                     help="Co-occurrence: this pair must be present at the same time (repeatable)."),
        click.option("--count", type=click.IntRange(min=1, max=MAX_COUNT), default=None, metavar="K",
                     help="Target: K pods of the type at once on the node / pool / domain."),
        click.option("--more", is_flag=True,
                     help="Target: one more pod than initially runs on the node / pool / domain."),
    )):
        wrapper = option(wrapper)
    return wrapper
