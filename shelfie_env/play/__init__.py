"""For people: the terminal game (:mod:`~shelfie_env.play.terminal`), saved games (the file:
:mod:`~shelfie_env.play.replay_format`; shown and reviewed by :mod:`~shelfie_env.play.replay`)
and the web table (:mod:`~shelfie_env.play.web`). It reads reviews from :mod:`shelfie_env.arena`,
which imports nothing from here."""
