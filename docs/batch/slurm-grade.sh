#!/usr/bin/env bash
# A class graded in shards on a Slurm cluster: one array task per shard, then a job that
# merges them once every task has ended well (docs/INSTRUCTORS.md, "A large class").
#
#   bash docs/batch/slurm-grade.sh CLASS_DIR RESULTS_DIR [SHARDS]
#
# Run it from the kit's folder, with the kit installed in .venv (the README's set-up, with
# ".[instructor]" for report.html). Each task grades its slice with as many jobs as the cores
# Slurm gave it; the nodes need unprivileged user namespaces (kata grade says so where not).
set -euo pipefail
class=$(realpath "$1") results=$(realpath -m "$2") shards=${3:-8}
mkdir -p "$results/logs"
array=$(sbatch --parsable --job-name=kata-grade --array="1-$shards" --cpus-per-task=4 --time=02:00:00 \
  --output="$results/logs/shard-%a.out" \
  --wrap=". .venv/bin/activate && kata grade '$class' --out '$results/shard-'\$SLURM_ARRAY_TASK_ID \
--shard \$SLURM_ARRAY_TASK_ID/$shards --jobs \$SLURM_CPUS_PER_TASK")
merge=$(sbatch --parsable --job-name=kata-merge --dependency="afterok:$array" --output="$results/logs/merge.out" \
  --wrap=". .venv/bin/activate && kata grade --merge $(for i in $(seq 1 "$shards"); do printf "'%s' " "$results/shard-$i"; done)--out '$results'")
echo "shards: job $array (array 1-$shards); merge: job $merge, into $results"
