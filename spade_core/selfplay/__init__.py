"""The self-play loop: one model designs environments, plays them with and without a hint, and the
regret between the two decides the designer's reward."""
