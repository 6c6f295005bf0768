#!/usr/bin/env bash
# Train a shipped model's preset and measure the result with the arena, on the dice its card reports.
#   bash training/reproduce.sh ppo_2p|ppo_solo|td_2p [extra training flags]
set -euo pipefail
preset=${1:?usage: training/reproduce.sh PRESET [flags]}
shift
shelfie=${SHELFIE:-.venv/bin/shelfie}
run_dir=runs/$preset
case "$preset" in
  td_*)
    "$shelfie" train --config "$preset" --run-dir "$run_dir" "$@"
    "$shelfie" arena "td:path=$run_dir/latest.npz" greedy --players 2 --games 2000 --seed 0 --out "$run_dir/arena"
    ;;
  ppo_solo)
    "$shelfie" train --config "$preset" --run-dir "$run_dir" --export "$run_dir/$preset.npz" "$@"
    "$shelfie" arena "ppo:path=$run_dir/$preset.npz" greedy --players 1 --games 2000 --seed 0 --out "$run_dir/arena"
    ;;
  *)
    "$shelfie" train --config "$preset" --run-dir "$run_dir" --export "$run_dir/$preset.npz" "$@"
    "$shelfie" arena "ppo:path=$run_dir/$preset.npz" greedy --players 2 --games 2000 --seed 0 --out "$run_dir/arena"
    ;;
esac
