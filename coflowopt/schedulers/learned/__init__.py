"""Learned DAG coflow scheduling: DeepWeave (Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020, Sec. 2-4;
tags: [R] recovered from the paper, [C] reconstructed by us, docs/families/index.md).

Modules: :mod:`.features` (one job DAG as arrays), :mod:`.network` (the numpy forward pass the
scheduler infers with), :mod:`.torch_net` (the torch twin for training; needs the ``learn``
extra), :mod:`.checkpoint` (the ``.npz`` weights file), :mod:`.converter` (the Policy Converter,
Algorithm 2) and :mod:`.deepweave` (the registered scheduler).

This package imports nothing on import, so ``import coflowopt`` never loads torch; only
:mod:`.torch_net` imports torch.
"""
