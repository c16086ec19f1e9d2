"""``njit`` for the package's kernels: numba's nopython pipeline plus one pass, copy forwarding.

Why.  numba inlines a helper marked ``inline="always"`` at the level of its IR: each parameter
becomes a new variable bound to the caller's argument (``cur.1 = cur``).  For an array, each
such binding is a reference-count increment, and the release of the copy a decrement, both
atomic (``lock``-prefixed) calls into numba's runtime.  The LLVM pass numba runs to drop
matching pairs gives up once the helper branches (its decrements then sit on the branches,
often merged through a phi).  The cascade of the fluid kernel calls such helpers twice per
visit, 59 M visits for Varys on FB2010: a quarter of its samples under ``perf`` were the two
runtime functions, and on an AMD EPYC of family 25 model 1, where a locked instruction is
dearer than on the model-17 processors the earlier tables were measured on, the whole
command took 21.7 s instead of 9.0 s.  A loop calling a three-array walk helper ran 0.40 s
for 20 M calls with the plain pipeline, 0.045 s with this pass, 0.028 s written out by hand.

What.  :class:`ForwardCopies` replaces each use of a variable bound by a plain copy
``a = b`` with ``b`` itself and drops the copy, so the helper's body works on the caller's
variable and no count changes.  It forwards a copy only when that cannot change what a use
reads: ``a`` and ``b`` each have one definition in the function (after numba's SSA pass),
``b``'s definition cannot run again between the copy and any use of ``a`` (its block is not
reachable from the copy's block; in the same block, ``b`` is defined before the copy and ``a``
used only after it), and ``a`` feeds no phi (numba's phis become sequential
assignments, which a forwarded copy could make read each other's new values).  A
variable defined once inside a loop and copied there (``first = v`` on the first round, read
after the loop) is therefore left alone.  The pass runs on the caller's IR after inlining, so
only the functions that inline helpers need it; every kernel module takes this ``njit`` so
none is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
from numba.core import ir, ir_utils
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.untyped_passes import InlineInlinables, ReconstructSSA

from coflowopt import _kernel_cache

__all__ = ["ForwardCopies", "KernelCompiler", "apply_copies", "forward_copies", "njit",
           "safe_copies"]

# every kernel module imports this one before it defines a kernel: from here on their cache
# entries are keyed on the sources of all kernel modules (coflowopt._kernel_cache)
_kernel_cache.install()


def _reachable(cfg: Any, start: int) -> set[int]:
    """Blocks reachable from ``start`` by a path of one edge or more."""
    seen: set[int] = set()
    stack = [label for label, _ in cfg.successors(start)]
    while stack:
        label = stack.pop()
        if label in seen:
            continue
        seen.add(label)
        stack.extend(s for s, _ in cfg.successors(label))
    return seen


def safe_copies(func_ir: ir.FunctionIR) -> dict[str, ir.Var]:
    """The copies ``a = b`` of ``func_ir`` that can be forwarded (see the module docstring),
    as ``{a: b}``."""
    blocks = func_ir.blocks
    ndef: dict[str, int] = {}
    where: dict[str, tuple[int, int]] = {}  # variable -> (block, statement) of its definition
    in_phi: set[str] = set()
    for label, blk in blocks.items():
        for i, st in enumerate(blk.body):
            if isinstance(st, ir.Assign):
                name = st.target.name
                ndef[name] = ndef.get(name, 0) + 1
                where[name] = (label, i)
                if isinstance(st.value, ir.Expr) and st.value.op == "phi":
                    in_phi.update(v.name for v in st.value.incoming_values
                                  if isinstance(v, ir.Var))
    # a copy feeding a phi stays: numba turns a block's phis into assignments one after the
    # other at the end of each predecessor, so with the copy forwarded a phi could read another
    # phi's new value (`prev = g; g = nxt[g]` in a loop returned the new g as prev)
    candidates = [(label, i, st) for label, blk in blocks.items()
                  for i, st in enumerate(blk.body)
                  if isinstance(st, ir.Assign) and isinstance(st.value, ir.Var)
                  and ndef.get(st.target.name) == 1 and ndef.get(st.value.name) == 1
                  and st.target.name not in in_phi]
    copies: dict[str, ir.Var] = {}
    if not candidates:
        return copies
    cfg = compute_cfg_from_blocks(blocks)
    reach: dict[int, set[int]] = {}
    for label, i, st in candidates:
        d_label, d_i = where[st.value.name]
        if d_label != label:
            if label not in reach:
                reach[label] = _reachable(cfg, label)
            if d_label in reach[label]:
                continue  # the source can be redefined before a use of the copy
        else:
            if d_i > i:
                continue  # the copy reads the source's value from an earlier round
            early = blocks[label].body[:i]
            if any(v.name == st.target.name for s in early for v in s.list_vars()):
                continue  # a use before the copy reads an earlier round's value
        copies[st.target.name] = st.value
    return copies


def apply_copies(func_ir: ir.FunctionIR, copies: dict[str, ir.Var]) -> int:
    """Replace each ``a`` of ``copies`` by its source (through chains) and drop the copies;
    returns how many were dropped."""
    if not copies:
        return 0

    def root(v: ir.Var) -> ir.Var:
        while v.name in copies:
            v = copies[v.name]
        return v

    vardict = {a: root(b) for a, b in copies.items()}
    blocks = func_ir.blocks
    for blk in blocks.values():
        blk.body = [st for st in blk.body
                    if not (isinstance(st, ir.Assign) and st.target.name in vardict)]
    ir_utils.replace_vars(blocks, vardict)
    func_ir._definitions = ir_utils.build_definitions(blocks)
    return len(vardict)


def forward_copies(func_ir: ir.FunctionIR) -> int:
    """Forward the safe copies of ``func_ir`` in place, round after round until none is
    left; returns how many were dropped.

    One round is not enough: a helper inlined inside another inside a loop copies the
    caller's copy (``hk.2 = qkey.1`` of ``qkey.1 = qkey``), whose source is defined in the
    loop, so it is safe only once the first copy is forwarded and it reads ``qkey`` itself.
    The fast engine's rate change left three such array copies per indexed-heap update (six
    atomic reference-count calls each; 7% of fifo's samples at 4x)."""
    total = 0
    while True:
        n = apply_copies(func_ir, safe_copies(func_ir))
        if n == 0:
            return total
        total += n


@register_pass(mutates_CFG=False, analysis_only=False)
class ForwardCopies(FunctionPass):
    """numba compiler pass running :func:`forward_copies` on the untyped IR."""

    _name = "coflowopt_forward_copies"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        return forward_copies(state.func_ir) > 0


class KernelCompiler(CompilerBase):
    """numba's nopython pipeline with :class:`ForwardCopies` after inlining (and SSA)."""

    def define_pipelines(self) -> list[Any]:
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        names = [p for p, _ in pm.passes]
        pm.add_pass_after(ForwardCopies,
                          ReconstructSSA if ReconstructSSA in names else InlineInlinables)
        pm.finalize()
        return [pm]


def njit(*args: Any, **kws: Any) -> Callable[..., Any]:
    """``numba.njit`` with :class:`KernelCompiler` as its pipeline (same arguments)."""
    kws.setdefault("pipeline_class", KernelCompiler)
    return numba.njit(*args, **kws)
