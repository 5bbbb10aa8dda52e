# The task runtime's internal pieces (docs/TASK.md); the runtime itself and
# its public header come later.
list(APPEND SHOAL_SOURCES
    task/task_diff.c
    task/task_diff_merge.c
    task/task_lock.c
    task/task_path.c
    task/task_rand.c
    task/task_sched.c
    task/task_track.c)
