from shelfie_env.clip import clip, one_line


def test_clip_keeps_what_fits_and_marks_what_it_cuts():
    assert clip("planner", 7) == "planner"
    assert clip("planner", 6) == "plann…" and len(clip("x" * 100, 12)) == 12


def test_one_line_joins_whitespace_before_cutting():
    assert one_line("{'board':\n   [1,\t2]}", 60) == "{'board': [1, 2]}"
    assert one_line("a  " * 50, 10) == "a a a a a…"
