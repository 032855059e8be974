"""The ``search`` agent and its parts: the candidate actions, deals consistent with a
seat view (``sampler``), compiled play-outs (``rollout``) and the network that guesses
the hidden hands (``hand_model``). Empty on purpose: import the module you need."""
