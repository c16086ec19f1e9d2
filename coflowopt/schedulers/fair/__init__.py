"""Fair coflow scheduling (single-stage spec sections 2-4 and 8): schedulers that bound each
coflow's slowdown against isolation, and their fairness references.

Modules (one per algorithm, named by its paper name; the registry loads them lazily):

- ``cofair``: CoFair (De Pellegrini et al., TPDS 2022, Alg. 2, reconstructed): the primal-dual
  sigma-order under slowdown deadlines ``D_j = r_j + E C_j^0 / phi_j``, with ``E`` from MPS;
- Utopia, CoFair's fairness reference (section 8.1);
- the static-progress baseline (SPS, section 2.3);
- "Approximate", Shafiee and Ghaderi's LP-based ordering (section 8.2);
- IAOA, the information-agnostic online algorithm (section 8.3).
"""
