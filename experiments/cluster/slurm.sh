#!/bin/bash
# Runs an experiment config's variant × seed grid as a Slurm job array: each
# array task runs one shard (rollout run --shard auto reads the task's
# SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP and _COUNT) into its own store,
# STORE_DIR/shard-I-of-N.db. The array's size is the number of shards: keep
# it at most the number of runs (variants × seeds; more shards run nothing).
#
#   sbatch experiments/cluster/slurm.sh CONFIG [STORE_DIR]      # STORE_DIR: shards
#   rollout merge STORE_DIR/shard-*.db --into rollout.db        # once every task ended
#
# Submit it from a directory on the shared file system with rollout on PATH.
# Base policies come from $ROLLOUT_CACHE (else the user cache directory):
# `rollout pretrain CONFIG` before submitting trains them once; otherwise
# every task trains them itself (the same weights, the cache keeps one).
# A task that fails or is requeued resumes its store when it runs again.
#SBATCH --job-name=rollout
#SBATCH --array=1-4
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --output=rollout-%A_%a.log
set -euo pipefail
config=${1:?usage: sbatch experiments/cluster/slurm.sh CONFIG [STORE_DIR]}
store=${2:-shards}
exec rollout run "$config" --shard auto --store "$store/" --workers "${SLURM_CPUS_PER_TASK:-1}"
