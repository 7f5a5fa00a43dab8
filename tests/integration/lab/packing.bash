# packing.bash — jobs that hold GPU memory on the lab's fake GPUs (lab/fake-gpu.sh), for the
# packing test (124) and bench (bench/packing.sh). Source it after lab.sh.
LAB_FAKE_GPU=$LAB_HERE/fake-gpu.sh

# packing_train_py DIR: DIR/train.py, the job's program: it runs the fake GPU with its own
# arguments. xmemd's estimator in the lab (fake-profiler.sh) reads --fake-limit-mb from the
# same command line, so one line is both what is profiled and what runs.
packing_train_py() {
    printf 'import os, sys\nos.execv("/bin/bash", ["bash", "%s"] + sys.argv[1:])\n' "$LAB_FAKE_GPU" >"$1/train.py"
    chmod 0644 "$1/train.py"
}

# packing_script FILE LIMIT_MB TRUE_PEAK_MB SECONDS: a one-GPU batch script whose estimate
# has the limit LIMIT_MB and whose program holds TRUE_PEAK_MB for SECONDS on its GPU.
packing_script() {
    printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 train.py --fake-limit-mb=%s --true-peak-mb=%s --seconds=%s --gpu-dir=%s\n' \
        "$2" "$3" "$4" "$LAB/gpu" >"$1"
    chmod 0644 "$1"
}

# packing_reset: empty ledgers and event log (between two workloads on one lab).
packing_reset() { rm -f "$LAB"/gpu/*.nvidia* "$LAB/gpu/events"; }

# packing_node: the first node of partition debug (the GPU nodes), to keep a workload on
# the two GPUs of one node on both labs.
packing_node() { timeout 10 sinfo -h -N -p debug -o %N | sort -u | head -n 1; }
