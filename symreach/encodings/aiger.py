"""AIGER lowering of a ``TransitionSystem`` (binary ``aig`` or ASCII ``aag``).

Layout (AIGER 1.0, one bad-state output):

- **inputs**: one per action (``act <op> <pod>@<node>``), a one-hot choice;
  when more than one input is on, the step stutters (``valid`` is false);
- **latches**: one per state variable (``present[pod@node]``,
  ``count[pod@node#j]``), reset to 0; a variable that starts at 1 is stored
  inverted (its latch is named ``~present[...]``);
- the action ``a`` fires when its input is on, the choice is valid and its
  guard holds; move ``m`` fires when additionally ``m.pre`` holds;
  ``next(x) = OR(fired moves with x := 1) | (x & !OR(fired moves writing x))``;
- **output 0**: the target (the bad states).

Guards are lowered node by node; a PB comparison through the same reduced
ordered BDD as the CNF lowering (``cnf.pb_bdd``), each node a multiplexer.
ABC's reading of this file decides the same question as symreach: the
target is reachable iff the output can be 1.

Building and writing poll the run's context (``export`` is a phase too).
"""

from __future__ import annotations

from typing import Optional

from symreach.encodings.circuit import AND, CONST, NOT, OR, VAR
from symreach.encodings.cnf import PB_FALSE, PB_TRUE, normalise_pb, pb_bdd
from symreach.encodings.system import TransitionSystem
from symreach.run import RunContext


class Aig:
    """An and-inverter graph with AIGER numbering: literal = 2 * var + negated."""

    def __init__(self, n_inputs: int, n_latches: int) -> None:
        self.n_inputs, self.n_latches = n_inputs, n_latches
        self.ands: list[tuple[int, int]] = []  # gate var I+L+1+k -> (rhs0, rhs1)
        self._hash: dict[tuple[int, int], int] = {}

    def input(self, i: int) -> int:
        return 2 * (1 + i)

    def latch(self, j: int) -> int:
        return 2 * (1 + self.n_inputs + j)

    def and_(self, a: int, b: int) -> int:
        if a == 0 or b == 0 or a == (b ^ 1):
            return 0
        if a == 1:
            return b
        if b == 1 or a == b:
            return a
        key = (a, b) if a > b else (b, a)
        got = self._hash.get(key)
        if got is None:
            self.ands.append(key)
            got = 2 * (self.n_inputs + self.n_latches + len(self.ands))
            self._hash[key] = got
        return got

    def or_(self, a: int, b: int) -> int:
        return self.and_(a ^ 1, b ^ 1) ^ 1

    def all_(self, lits) -> int:
        out = 1
        for x in lits:
            out = self.and_(out, x)
        return out

    def any_(self, lits) -> int:
        out = 0
        for x in lits:
            out = self.or_(out, x)
        return out

    def ite(self, c: int, t: int, e: int) -> int:
        return self.or_(self.and_(c, t), self.and_(c ^ 1, e))

    @property
    def max_var(self) -> int:
        return self.n_inputs + self.n_latches + len(self.ands)


class AigerModel:
    """The AIG of a system plus names: ``inputs[i]`` is action i, ``latches[j]``
    state variable ``system.state_vars[j]`` (inverted when ``inverted[j]``)."""

    def __init__(self, system: TransitionSystem, run: Optional[RunContext] = None) -> None:
        run = run if run is not None else RunContext()
        self.system = system
        acts, svars = system.actions, system.state_vars
        aig = self.aig = Aig(len(acts), len(svars))
        self.inverted = [bool(system.initial[v]) for v in svars]
        self._lit: dict[int, int] = {}
        for j, v in enumerate(svars):
            self._lit[v] = aig.latch(j) ^ int(self.inverted[j])
        # one-hot choice of the action
        seen, conflict = 0, 0
        sels = [aig.input(i) for i in range(len(acts))]
        for s in sels:
            conflict = aig.or_(conflict, aig.and_(seen, s))
            seen = aig.or_(seen, s)
        valid = conflict ^ 1
        changed: dict[int, int] = {v: 0 for v in svars}
        setto1: dict[int, int] = {v: 0 for v in svars}
        for i, a in enumerate(acts):
            run.check("export")
            fire = aig.and_(aig.and_(sels[i], valid), self.lower(a.guard))
            for m in a.moves:
                fm = aig.and_(fire, aig.all_(self._lit[v] ^ int(not b) for v, b in m.pre))
                for v, b in m.post:
                    changed[v] = aig.or_(changed[v], fm)
                    if b:
                        setto1[v] = aig.or_(setto1[v], fm)
        self.next: list[int] = []
        for j, v in enumerate(svars):
            nxt = aig.or_(setto1[v], aig.and_(self._lit[v], changed[v] ^ 1))
            self.next.append(nxt ^ int(self.inverted[j]))
        self.bad = self.lower(system.target)

    def lower(self, root: int) -> int:
        c, aig = self.system.circuit, self.aig
        for i in c.topological([root]):
            if i in self._lit:
                continue
            nd = c.node(i)
            k = nd.kind
            if k == CONST:
                out = int(bool(i))
            elif k == VAR:  # pragma: no cover - state variables are pre-set
                raise ValueError(f"variable {c.var_name(i)} is not a state variable")
            elif k == NOT:
                out = self._lit[nd.children[0]] ^ 1
            elif k == AND:
                out = aig.all_(self._lit[ch] for ch in nd.children)
            elif k == OR:
                out = aig.any_(self._lit[ch] for ch in nd.children)
            else:
                terms, bound = normalise_pb(nd.children, nd.weights, nd.bound)
                root_ref, nodes = pb_bdd([w for w, _, _ in terms], bound)
                refs: list[int] = []

                def ref(x: int) -> int:
                    return 1 if x == PB_TRUE else 0 if x == PB_FALSE else refs[x]
                for (jx, hi, lo) in nodes:
                    _, v, pos = terms[jx]
                    refs.append(aig.ite(self._lit[v] ^ int(not pos), ref(hi), ref(lo)))
                out = ref(root_ref)
            self._lit[i] = out
        return self._lit[root]

    # ---- names ------------------------------------------------------------------
    def input_names(self) -> list[str]:
        s = self.system
        return [f"act {a.op} {s.type_names[a.type_index]}@{s.node_names[a.node_index]}" for a in s.actions]

    def latch_names(self) -> list[str]:
        s = self.system
        out = []
        for j, v in enumerate(s.state_vars):
            nm = s.circuit.var_name(v)
            base = f"{nm[0]}[{s.type_names[nm[1]]}@{s.node_names[nm[2]]}" + (f"#{nm[3]}]" if nm[0] == "count" else "]")
            out.append(("~" if self.inverted[j] else "") + base)
        return out

    # ---- writing ------------------------------------------------------------------
    def to_bytes(self, binary: bool = True, comment: Optional[str] = None,
                 run: Optional[RunContext] = None) -> bytes:
        run = run if run is not None else RunContext()
        aig = self.aig
        I, L, A = aig.n_inputs, aig.n_latches, len(aig.ands)
        M = aig.max_var
        out = bytearray()
        if binary:
            out += f"aig {M} {I} {L} 1 {A}\n".encode()
        else:
            out += f"aag {M} {I} {L} 1 {A}\n".encode()
            for i in range(I):
                out += f"{aig.input(i)}\n".encode()
        for j in range(L):
            out += (f"{self.next[j]}\n" if binary else f"{aig.latch(j)} {self.next[j]}\n").encode()
        out += f"{self.bad}\n".encode()
        for k, (r0, r1) in enumerate(aig.ands):
            if k % 4096 == 0:
                run.check("export")
            lhs = 2 * (I + L + 1 + k)
            if binary:
                out += _varint(lhs - r0) + _varint(r0 - r1)
            else:
                out += f"{lhs} {r0} {r1}\n".encode()
        for i, nm in enumerate(self.input_names()):
            out += f"i{i} {nm}\n".encode()
        for j, nm in enumerate(self.latch_names()):
            out += f"l{j} {nm}\n".encode()
        out += b"o0 target\n"
        if comment:
            out += b"c\n" + comment.encode() + b"\n"
        return bytes(out)


def _varint(x: int) -> bytes:
    out = bytearray()
    while x & ~0x7F:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)
