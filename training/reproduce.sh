#!/usr/bin/env bash
# Train a shipped model's preset and measure the result with the arena, on the dice its card reports.
#   bash training/reproduce.sh ppo_2p|ppo_solo [extra shelfie train flags]
set -euo pipefail
preset=${1:?usage: training/reproduce.sh PRESET [flags]}
shift
shelfie=${SHELFIE:-.venv/bin/shelfie}
run_dir=runs/$preset
"$shelfie" train --config "$preset" --run-dir "$run_dir" --export "$run_dir/$preset.npz" "$@"
if [ "$preset" = ppo_solo ]; then
  "$shelfie" arena "ppo:path=$run_dir/$preset.npz" greedy --players 1 --games 2000 --seed 0 --out "$run_dir/arena"
else
  "$shelfie" arena "ppo:path=$run_dir/$preset.npz" greedy --players 2 --games 2000 --seed 0 --out "$run_dir/arena"
fi
