#!/usr/bin/env bash
# Train a shipped model's preset, then play the result against greedy in the arena the way its
# card's figure against greedy was measured: the card's table size, deals and dice.
#   bash training/reproduce.sh ppo_2p|ppo_solo|ppo_afterstate_2p|ppo_flat_2p|td_2p|td_3p|td_4p [extra training flags]
set -euo pipefail
preset=${1:?usage: training/reproduce.sh PRESET [flags]}
shift
shelfie=${SHELFIE:-.venv/bin/shelfie}
python=${PYTHON:-.venv/bin/python}
card=shelfie_env/models/$preset.json
if [ ! -f "$card" ]; then
  echo "training/reproduce.sh: no shipped card $card: the presets with a shipped model are" \
    "ppo_2p, ppo_solo, ppo_afterstate_2p, ppo_flat_2p, td_2p, td_3p and td_4p" >&2
  exit 2
fi
players=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["num_players"])' "$card")
run_dir=runs/$preset
case "$preset" in
  td_*)
    "$shelfie" train --config "$preset" --run-dir "$run_dir" "$@"
    model="td:path=$run_dir/latest.npz"
    ;;
  ppo_flat_2p)  # the preset's 10M decisions, carried on to the shipped 20M
    "$shelfie" train --config "$preset" --run-dir "$run_dir" "$@"
    "$shelfie" train --run-dir "$run_dir" --resume --total-steps 20M --export "$run_dir/$preset.npz"
    model="ppo:path=$run_dir/$preset.npz"
    ;;
  *)
    "$shelfie" train --config "$preset" --run-dir "$run_dir" --export "$run_dir/$preset.npz" "$@"
    model="ppo:path=$run_dir/$preset.npz"
    ;;
esac
# The cards' arena figures: 2,000 games, one dice stream per game (--dice stream), from dice seed 0
# (ppo_afterstate_2p: the test deals' first seed, 30,000,000); ppo_flat_2p's card reports 1,000
# duplicate, luck-corrected games on the test deals (common dice).
case "$preset" in
  ppo_flat_2p) deals=(--games 1000 --deals test --duplicate --luck) ;;
  ppo_afterstate_2p) deals=(--games 2000 --seed 30000000 --dice stream) ;;
  *) deals=(--games 2000 --seed 0 --dice stream) ;;
esac
# 1 player: each bot its own games on the same dice; 2: the model against greedy; 3-4: the model
# alone against a field of greedy bots (the td_3p and td_4p cards' --field greedy figures).
if [ "$players" -ge 3 ]; then
  opponents=(--field greedy)
else
  opponents=(greedy)
fi
"$shelfie" arena "$model" "${opponents[@]}" --players "$players" "${deals[@]}" --out "$run_dir/arena"
