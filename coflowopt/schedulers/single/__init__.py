"""Single-stage coflow schedulers: Varys (SEBF + MADD), Sincronia (BSSI), Aalo (D-CLAS), A-SEBF,
the static orders (FIFO, SCF, NCF, LCF) and per-flow fair sharing.

One module per algorithm, named by its paper name.  Each module holds the algorithm's policy,
its parameter dataclass and its ``run_<name>`` implementation; the registry
(:mod:`coflowopt.schedulers.registry`) names them lazily, and ``coflowopt.schedulers.get(name)``
gives the public callable.
"""
