"""Training of learned shelfie bots: MaskablePPO self-play (see ``docs/training.md``)."""
