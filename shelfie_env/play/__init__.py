"""For people: the terminal game (:mod:`~shelfie_env.play.terminal`) and the web table (:mod:`~shelfie_env.play.web`)."""
