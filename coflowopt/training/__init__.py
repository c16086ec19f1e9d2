"""Training the learned schedulers: an application on top of the algorithm families, not one
of them.

The learned family (:mod:`coflowopt.schedulers.learned`) holds what a trained policy needs to
schedule (features, the networks, the environment, the checkpoint, inference); this package
holds what makes the weights, and may use the run service (:func:`coflowopt.run`) and the
other applications, which a family may not.  One training method per module:

- :mod:`.reinforce`: DeepWeave's REINFORCE with ``N`` parallel agents (Sun, Guo, Wang, Li,
  Lan, Hu, IJCAI 2020, Algorithm 1);
- :mod:`.episodes`: one agent's episode with the policy's Plackett-Luce draws (what every
  on-policy method samples);
- :mod:`.evaluate`: the greedy policy's mean JCT on a fixed set, and Sincronia's level on it
  through the run service;
- :mod:`.teachers`: the protocol's workloads, training seeds disjoint from the held-out ones,
  Sincronia's and G-DM-BF's orders as teachers (issue 30);
- :mod:`.imitation`: pre-training by the Plackett-Luce likelihood of the better teacher's order;
- :mod:`.ppo`: fine-tuning with clipped updates, the agents' baseline, a decaying entropy bonus
  and KL to the pre-trained policy.

Importing this package imports neither torch nor the bench harness: torch is the ``learn``
extra and is imported inside the functions that train.
"""

from __future__ import annotations

from coflowopt.training.episodes import rollout
from coflowopt.training.reinforce import TrainConfig, TrainResult, train

__all__ = ["TrainConfig", "TrainResult", "rollout", "train"]
