#!/bin/bash
# One shard of CONFIG's variant × seed grid per task of a Slurm job array,
# each into its own store, STORE_DIR/shard-I-of-N.db (see go doc ./cmd/rollout, "Across a
# cluster"): sbatch experiments/cluster/slurm.sh CONFIG [STORE_DIR]
# The array's size is the number of shards; the tasks may start at any index.
#SBATCH --job-name=rollout
#SBATCH --array=1-4
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --output=rollout-%A_%a.log
set -euo pipefail
config=${1:?usage: sbatch experiments/cluster/slurm.sh CONFIG [STORE_DIR]}
store=${2:-shards}
exec rollout run "$config" --shard auto --store "$store/" --workers "${SLURM_CPUS_PER_TASK:-1}"
