"""Multi-stage (coflow DAG) schedulers after Shafiee and Ghaderi, *Scheduling Coflows with
Dependency Graph* (IEEE/ACM ToN 2021; arXiv 2012.11702): BNA (Algorithm 1), DMA (Algorithm 2),
DMA-SRT (Algorithm 3) and DMA-RT for makespan, and G-DM / G-DM-RT with their backfilling variants
and the ``O(m)`` LP baseline of Tian et al. (INFOCOM 2018) for the total weighted job completion
time.  Provenance tags in the docstrings: [R] recovered from the paper, [C] reconstructed by us
(one legend for the package: docs/families/index.md).

The algorithms work in unit slots (:mod:`coflowopt.schedulers.dag.slots`: a slot plan in
run-length form and its real-first executor).  One module per algorithm, named by its paper
name; the registry (:mod:`coflowopt.schedulers.registry`) names them lazily.
"""
