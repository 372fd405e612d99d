"""Real cluster dumps at scale: load, one ``check`` and one ``matrix``, this release against an older one.

The dumps are built from real templates: the objects of ``examples/cluster-dump.yaml``
(``kubectl get -o yaml`` output of a six-node cluster: Nodes, Pods with
status, ReplicaSets, Deployments, StatefulSets, DaemonSets) and the ZooKeeper
StatefulSet of the Kubernetes website (``../shared/data/k8s``). Each
application namespace is copied, each running pod is replicated onto nodes of
its original node's class, every object gets ``managedFields`` and pods a full
``status``, as a real ``kubectl get -A -o yaml`` prints them. Nodes are 1 per 20
pods (500 for 10,000 pods); two DaemonSets run on them.

Every measurement is its own process (``PYTHONPATH`` picks the release), all
in one run, so the ratios compare like with like on a shared machine:

    python -m benchmarks.k8s_dump_scale --old /tmp/i12-old      # git worktree add /tmp/i12-old d301ada
    python -m benchmarks.k8s_dump_scale --sizes 500 --quick     # a smoke run

Writes ``benchmarks/results/k8s_dump_scale.md``.
"""

from __future__ import annotations

import json
import marshal
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import click
import yaml

from benchmarks.shared_data import K8S_DIR

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "examples" / "cluster-dump.yaml"
OUT = ROOT / "benchmarks" / "results" / "k8s_dump_scale.md"
PODS_PER_NODE = 20
REPLICAS = 10            # each running pod of a copied namespace is replicated this many times
APP_NAMESPACES = ("payments", "edge", "shop", "ml")
# Node classes in proportion (of 20): the original node each class copies.
NODE_CLASSES = ["cp-1"] + ["gpu-b"] * 3 + ["public-c"] * 2 + ["general-a"] * 5 + ["general-b"] * 5 + ["general-c"] * 4
QUERY = ("payments-0/payments-api", "public-c-0004")  # a pod type and a public node, present at every size


def _clone(obj):
    """A deep copy of plain data (marshal: several times faster than copy.deepcopy)."""
    return marshal.loads(marshal.dumps(obj))


def managed_fields(manager: str, status: bool) -> list[dict]:
    """What the API server records for a controller-created object (and its kubelet status)."""
    spec = {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                           "f:ownerReferences": {".": {}, 'k:{"uid":"x"}': {}}},
            "f:spec": {"f:containers": {'k:{"name":"main"}': {".": {}, "f:image": {}, "f:imagePullPolicy": {},
                                                              "f:name": {}, "f:resources": {".": {},
                                                                                            "f:requests": {}}}},
                       "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                       "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}
    out = [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": spec, "manager": manager,
            "operation": "Update", "time": "2025-03-13T08:17:33Z"}]
    if status:
        out.append({"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubelet", "operation": "Update",
                    "subresource": "status", "time": "2025-03-13T08:17:40Z",
                    "fieldsV1": {"f:status": {"f:conditions": {f'k:{{"type":"{t}"}}': {"f:status": {}}
                                                               for t in ("ContainersReady", "Ready")},
                        "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
                        "f:podIPs": {".": {}, 'k:{"ip":"10.244.3.10"}': {".": {}, "f:ip": {}}}, "f:startTime": {}}}})
    return out


def container_statuses(spec: dict) -> list[dict]:
    return [{"containerID": "containerd://" + "0" * 64, "image": c.get("image", ""), "imageID": "sha256:" + "1" * 64,
             "lastState": {}, "name": c["name"], "ready": True, "restartCount": 0, "started": True,
             "state": {"running": {"startedAt": "2025-03-13T08:17:39Z"}}} for c in spec.get("containers", [])]


def zookeeper_statefulset() -> Optional[dict]:
    path = K8S_DIR / "website-zookeeper-statefulset.yaml"
    if not path.exists():
        return None
    return next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "StatefulSet")


def build_dump(pods: int) -> dict:
    """A ``kind: List`` of about ``pods`` running pods on ``pods / 20`` nodes."""
    items = yaml.safe_load(TEMPLATE.read_text())["items"]
    by_kind: dict[str, list[dict]] = {}
    for item in items:
        by_kind.setdefault(item["kind"], []).append(item)
    originals = {n["metadata"]["name"]: n for n in by_kind["Node"]}
    n_nodes = max(len(NODE_CLASSES), pods // PODS_PER_NODE)
    nodes, by_class = [], {}
    for i in range(n_nodes):
        cls = NODE_CLASSES[i % len(NODE_CLASSES)]
        node = _clone(originals[cls])
        name = f"{cls}-{i:04d}"
        node["metadata"].update(name=name, uid=f"node-{i}")
        node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        node["metadata"]["managedFields"] = managed_fields("kubelet", status=True)
        node["status"]["allocatable"].update(cpu="32", memory="128Gi", pods="110")
        node["status"]["capacity"].update(cpu="32", memory="128Gi", pods="110")
        nodes.append(node)
        by_class.setdefault(cls, []).append(name)
    cursor = {cls: 0 for cls in by_class}

    def place(original_node: str) -> str:
        names = by_class[original_node]
        cursor[original_node] += 1
        return names[cursor[original_node] % len(names)]

    out: list[dict] = list(nodes)
    running = 0

    def add_pod(pod: dict, namespace: str, suffix: str, node: Optional[str]) -> None:
        nonlocal running
        pod = _clone(pod)
        meta = pod["metadata"]
        meta.update(namespace=namespace, name=meta["name"] + suffix, uid=f"{namespace}-{meta['name']}{suffix}")
        meta["managedFields"] = managed_fields("kube-controller-manager", status=True)
        if node:
            pod["spec"]["nodeName"] = node
            pod["status"]["containerStatuses"] = container_statuses(pod["spec"])
            running += 1
        out.append(pod)

    # kube-system once: coredns, the GPU device plugin, and a DaemonSet on every node (like kube-proxy).
    for kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        for obj in by_kind.get(kind, []):
            if obj["metadata"]["namespace"] == "kube-system":
                out.append(_clone(obj))
    proxy = _clone(next(d for d in by_kind["DaemonSet"] if d["metadata"]["name"] == "nvidia-device-plugin"))
    proxy["metadata"]["name"] = "kube-proxy"
    proxy["spec"]["template"]["spec"].pop("affinity", None)
    proxy["spec"]["template"]["spec"].pop("nodeSelector", None)
    proxy["spec"]["template"]["spec"]["tolerations"] = [{"operator": "Exists"}]
    out.append(proxy)
    ds_pod = next(p for p in by_kind["Pod"] if p["metadata"]["name"].startswith("nvidia-device-plugin"))
    for node in nodes:
        name = node["metadata"]["name"]
        pod = _clone(ds_pod)
        pod["metadata"]["ownerReferences"][0]["name"] = "kube-proxy"
        pod["spec"] = _clone(proxy["spec"]["template"]["spec"])
        pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}}}
        pod["metadata"]["name"] = "kube-proxy"
        add_pod(pod, "kube-system", f"-{name}", name)
        if name.startswith("gpu-b"):
            pod = _clone(ds_pod)
            pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [name]}]}]}}}
            pod["metadata"]["name"] = "nvidia-device-plugin"
            add_pod(pod, "kube-system", f"-{name}", name)
    for pod in by_kind["Pod"]:
        if pod["metadata"]["namespace"] == "kube-system" and pod["metadata"]["name"].startswith("coredns"):
            add_pod(pod, "kube-system", "", place(pod["spec"]["nodeName"]))
    zk = zookeeper_statefulset()
    app_pods = [p for p in by_kind["Pod"] if p["metadata"]["namespace"] in APP_NAMESPACES]
    k = 0
    while running < pods:
        for kind in ("StatefulSet", "Deployment", "ReplicaSet"):
            for obj in by_kind.get(kind, []):
                ns = obj["metadata"]["namespace"]
                if ns in APP_NAMESPACES:
                    clone = _clone(obj)
                    clone["metadata"]["namespace"] = f"{ns}-{k}"
                    clone["metadata"]["managedFields"] = managed_fields("kube-controller-manager", status=False)
                    out.append(clone)
        for pod in app_pods:
            for r in range(REPLICAS):
                if running >= pods:
                    break
                node = pod["spec"].get("nodeName")
                add_pod(pod, f"{pod['metadata']['namespace']}-{k}", f"-{r}", place(node) if node else None)
        if zk is not None and running < pods:
            clone = _clone(zk)
            clone["metadata"]["namespace"] = f"zk-{k}"
            out.append(clone)
        k += 1
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": out}


def write_dump(pods: int, folder: Path) -> dict[str, Path]:
    dump = build_dump(pods)
    paths = {"yaml": folder / f"dump-{pods}.yaml", "json": folder / f"dump-{pods}.json"}
    with open(paths["yaml"], "w") as handle:
        yaml.dump(dump, handle, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    paths["json"].write_text(json.dumps(dump, indent=4) + "\n")
    return paths


LOAD_SNIPPET = """
import sys, time
try:
    from symreach.frontends.dispatch import load_any
except ImportError:
    from symreach.inputs import load_any
t = time.process_time()
try:
    inst = load_any(sys.argv[1])
    print("ok", time.process_time() - t, len(inst.pod_types), len(inst.nodes))
except Exception as exc:
    print("error", time.process_time() - t, str(exc)[-120:].replace("\\n", " "))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(code: Path, args: list[str], timeout: float) -> tuple[str, float, str]:
    """(status, CPU seconds, detail) of one fresh process running ``args`` with ``code`` on PYTHONPATH.

    CPU time (user + system of the child) rather than wall time: the machine is shared, and
    CPU time is what a process costs whatever else runs beside it.
    """
    env = {**os.environ, "PYTHONPATH": str(code)}
    start, cpu = time.perf_counter(), _children_cpu()
    try:
        # cwd too: ``python -c`` puts the working directory before PYTHONPATH on sys.path.
        proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env, timeout=timeout,
                              cwd=code)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, f"> {timeout:.0f} s"
    wall = _children_cpu() - cpu
    out = (proc.stdout.strip().splitlines() or [""])[-1] if proc.stdout else ""
    err = (proc.stderr.strip().splitlines() or [""])[-1]
    return str(proc.returncode), wall, out if proc.returncode in (0, 1) else err


def cli(subcommand: list[str]) -> list[str]:
    return ["-c", "import sys; from symreach.cli import main; sys.argv[0] = 'symreach'; main()"] + subcommand


def run(sizes: list[int], old: Optional[Path], timeout: float, quick: bool, matrix_timeout: float,
        matrix_sizes: tuple[int, ...] = (), new: Path = ROOT,
        others: tuple[tuple[str, Path], ...] = ()) -> str:
    releases = [("this", new)] + list(others) + ([("d301ada", old)] if old else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="k8s-dump-scale-") as tmp:
        for pods in sizes:
            paths = write_dump(pods, Path(tmp))
            for fmt, path in paths.items():
                size_mb = path.stat().st_size / 1e6
                for release, code in releases:
                    status, wall, detail = measure(code, ["-c", LOAD_SNIPPET, str(path)], timeout)
                    parts = detail.split()
                    loaded = parts[:1] == ["ok"]
                    load_s = float(parts[1]) if loaded else None
                    shape = f"{parts[2]} types, {parts[3]} nodes" if loaded else detail[:90]
                    check = measure(code, cli(["check", str(path), "--pod", QUERY[0], "--node", QUERY[1],
                                               "--quiet"]), timeout) if loaded else None
                    matrix = None
                    if loaded and not quick and pods in matrix_sizes:
                        matrix = measure(code, cli(["matrix", str(path), "--format", "csv",
                                                    "--timeout", str(matrix_timeout)]),
                                         min(timeout, matrix_timeout * 1.5))
                    rows.append((pods, fmt, size_mb, release, load_s, check, matrix, shape))
                    print(rows[-1], flush=True)
    return table(rows, matrix_timeout)


def _cell(result: Optional[tuple[str, float, str]]) -> str:
    if result is None:
        return "-"
    status, wall, detail = result
    verdict = {"0": "deployable", "1": "not deployable", "3": "unknown"}.get(status, "")
    if status == "timeout":
        return f"> {wall:.0f} s (timeout)"
    if status not in ("0", "1", "3"):
        return f"error ({detail[:60]})"
    return f"{wall:.1f} s" + (f" ({verdict})" if verdict and verdict != "deployable" else "")


def table(rows, matrix_timeout: float) -> str:
    lines = [
        "# Real cluster dumps at scale",
        "",
        "Generated by `python -m benchmarks.k8s_dump_scale --old /tmp/i12-old` (dumps built from",
        "`examples/cluster-dump.yaml` and the website ZooKeeper StatefulSet, with status and managedFields;",
        f"1 node per {PODS_PER_NODE} pods). Every cell is one fresh process on the same shared 2-core",
        "machine in one run: compare the two releases row by row, not with other runs. Times are CPU",
        "seconds (user + system), which a busy machine inflates less than wall time. *load* is",
        "`load_any` inside the process; *check* and *matrix* are the whole command",
        f"(`check --pod {QUERY[0]} --node {QUERY[1]}`, `matrix --timeout {matrix_timeout:.0f}`; a matrix",
        "process is killed at the per-process limit if it overruns its own timeout),",
        "Python start-up and imports included. `d301ada` is the previous release.",
        "",
        "| pods | format | MB | release | load | check | matrix | instance |",
        "|---:|---|---:|---|---:|---:|---:|---|",
    ]
    for pods, fmt, size_mb, release, load_s, check, matrix, shape in rows:
        load = f"{load_s:.1f} s" if load_s is not None else "refused"
        if load_s is None:
            shape = "refused: " + (shape.split(": ", 1)[-1] if ": " in shape else shape).rstrip(" (")
        lines.append(f"| {pods} | {fmt} | {size_mb:.1f} | {release} | {load} | {_cell(check)} | {_cell(matrix)} "
                     f"| {shape} |")
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--sizes", default="500,2000,10000", show_default=True, help="Pod counts, comma-separated.")
@click.option("--new", type=click.Path(exists=True, file_okay=False, path_type=Path), default=ROOT,
              help="The checkout measured as this release (default: this one; a snapshot keeps edits out).")
@click.option("--old", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout of the previous release to compare with (git worktree add DIR d301ada).")
@click.option("--timeout", type=float, default=600.0, show_default=True, help="Seconds per process.")
@click.option("--quick", is_flag=True, help="Skip matrix.")
@click.option("--matrix-timeout", type=float, default=60.0, show_default=True, help="matrix --timeout.")
@click.option("--matrix-sizes", default="500", show_default=True,
              help="Pod counts at which matrix runs (it may overrun its own --timeout; see the table).")
@click.option("--compare", "others", multiple=True, metavar="LABEL=DIR",
              help="Another checkout measured beside them, shown as LABEL (e.g. an intermediate commit).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=OUT, show_default=True)
def main(sizes: str, new: Path, old: Optional[Path], timeout: float, quick: bool, matrix_timeout: float,
         matrix_sizes: str, others: tuple[str, ...], out: Path) -> None:
    pairs = []
    for other in others:
        label, sep, folder = other.partition("=")
        if not sep or not Path(folder).is_dir():
            raise click.BadParameter(f"expected LABEL=DIR with an existing DIR, got {other!r}",
                                     param_hint="--compare")
        pairs.append((label, Path(folder)))
    text = run([int(s) for s in sizes.split(",")], old, timeout, quick, matrix_timeout,
               tuple(int(s) for s in matrix_sizes.split(",") if s), new, tuple(pairs))
    out.write_text(text)
    click.echo(text)


if __name__ == "__main__":
    main()
