#!/usr/bin/python3
"""The Dask baseline of the thesis's B1 (job creation and completion) for
bench/task: per-task overhead of Dask distributed (Debian's
python3-distributed) on a LocalCluster of --workers worker processes with
one thread each, the same number of workers the task runtime gets.

    dask_b1.py [--workers N] [--shapes 1000x1,1x1000,10x100,100x10]
               [--nested chain:20,tree:6] [--reps N]

Every task does what a B1 job does: it reads one value and writes one
(returns its argument plus one).

  BxJ       B blocks one after another, each J tasks submitted at once
            (client.map) and gathered before the next block starts: 1000x1
            is one task at a time, 1x1000 a thousand at once;
  chain:D   a task that submits one child from inside its worker
            (worker_client, so it secedes while it waits) and returns after
            it, D deep (D + 1 tasks);
  tree:D    the same with two children each, depth D (2^(D+1) - 1 tasks).

Prints the median over --reps runs of the microseconds per task, from the
first submit to the last result, the cluster already started and warmed
up:

    b1 <shape> <us per task>

the line format of every B1 program in bench/task.  Exits 3 with a message
when dask.distributed cannot be imported (apt-get install
python3-distributed).
"""

import argparse
import statistics
import sys
import time


def job(x):
    return x + 1


def chain(depth):
    if depth == 0:
        return job(0)
    from distributed import worker_client
    with worker_client() as c:
        return job(c.submit(chain, depth - 1, pure=False).result())


def tree(depth):
    if depth == 0:
        return job(0)
    from distributed import worker_client
    with worker_client() as c:
        kids = [c.submit(tree, depth - 1, pure=False) for _ in range(2)]
        return job(sum(c.gather(kids)))


def parse_shape(text, nested):
    """(kind, a, b, tasks) or raises ValueError."""
    if nested:
        kind, _, depth = text.partition(":")
        d = int(depth)
        if kind == "chain" and 0 <= d <= 1000:
            return kind, d, 0, d + 1
        if kind == "tree" and 0 <= d <= 12:
            return kind, d, 0, (2 << d) - 1
        raise ValueError(text)
    blocks, _, jobs = text.partition("x")
    b, j = int(blocks), int(jobs)
    if b < 1 or j < 1 or b * j > 1000000:
        raise ValueError(text)
    return "blocks", b, j, b * j


def run_shape(client, kind, a, b):
    """Seconds for one run of a shape; checks the results."""
    t0 = time.perf_counter()
    if kind == "blocks":
        v = 0
        for _ in range(a):
            futures = client.map(job, [v] * b, pure=False)
            results = client.gather(futures)
            if results != [v + 1] * b:
                raise RuntimeError("wrong results in a block")
            v += 1
    else:
        fn = chain if kind == "chain" else tree
        got = client.submit(fn, a, pure=False).result()
        want = a + 1 if kind == "chain" else (2 << a) - 1
        # chain: each level adds one; tree: each node adds one.
        if got != want:
            raise RuntimeError("%s:%d returned %s, want %s" % (
                kind, a, got, want))
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(
        description="Per-task overhead of Dask distributed (B1 baseline)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shapes", default="1000x1,1x1000,10x100,100x10")
    ap.add_argument("--nested", default="chain:20,tree:6")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    try:
        shapes = [(s,) + parse_shape(s, False)
                  for s in a.shapes.split(",") if s]
        shapes += [(s,) + parse_shape(s, True)
                   for s in a.nested.split(",") if s]
    except ValueError as e:
        ap.error("bad shape %s" % e)
    if a.workers < 1 or a.reps < 1:
        ap.error("--workers and --reps must be at least 1")
    try:
        import dask
        import distributed
        from distributed import Client, LocalCluster
    except ImportError as e:
        print("dask_b1: no dask.distributed (%s): apt-get install "
              "python3-distributed" % e, file=sys.stderr)
        return 3
    import logging
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with LocalCluster(n_workers=a.workers, threads_per_worker=1,
                      processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        print("# b1 dask %s distributed %s, LocalCluster %d worker "
              "processes x 1 thread, %d reps, medians" % (
                  dask.__version__, distributed.__version__, a.workers,
                  a.reps), flush=True)
        # Warm up: every worker has run tasks and imported this module.
        client.gather(client.map(job, range(50), pure=False))
        client.submit(tree, 2, pure=False).result()
        for name, kind, x, y, tasks in shapes:
            secs = [run_shape(client, kind, x, y) for _ in range(a.reps)]
            print("b1 %s %.2f" % (name, statistics.median(secs) * 1e6 /
                                  tasks), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
