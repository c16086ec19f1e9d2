"""Fair coflow scheduling (CoFair, De Pellegrini et al., IEEE TPDS 2022, and the references
it and DeepWeave compare with): schedulers that bound each
coflow's slowdown against isolation, and their fairness references.

Modules (one per algorithm, named by its paper name; the registry loads them lazily):

- ``cofair``: CoFair (De Pellegrini et al., TPDS 2022, Alg. 2, reconstructed): the primal-dual
  sigma-order under slowdown deadlines ``D_j = r_j + E C_j^0 / phi_j``, with ``E`` from MPS;
- Utopia, CoFair's fairness reference (mechanism reconstructed [C] from its abstract);
- the static-progress baseline (the SPS notion of the CoFair paper, its constraints (1)-(2)
  reconstructed [C]);
- "Approximate", Shafiee and Ghaderi's LP-based ordering (IEEE/ACM ToN 2018);
- Yosemite (Alg. 1, the offline order) and IAOA (Alg. 2, the information-agnostic online
  algorithm; Wang et al., 2019, as DeepWeave cites it), from the Yosemite draft (Zhang, Shi,
  Yin, Wang, Guo, 2017).

Tags: [R] recovered from the paper, [C] reconstructed by us (docs/families/index.md).
"""
