"""The hand-written bots: ``greedy`` (tile efficiency) and ``rules`` (greedy plus
look-ahead, claim and Hu judgement)."""
