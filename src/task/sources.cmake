# The task runtime (docs/TASK.md, include/shoal/task.h).
list(APPEND SHOAL_SOURCES
    task/task_chan.c
    task/task_coord.c
    task/task_copy.c
    task/task_diff.c
    task/task_diff_merge.c
    task/task_elf.c
    task/task_lock.c
    task/task_lockrec.c
    task/task_msg.c
    task/task_page.c
    task/task_path.c
    task/task_rand.c
    task/task_region.c
    task/task_run.c
    task/task_sched.c
    task/task_spawn.c
    task/task_track.c
    task/task_vers.c
    task/task_worker.c)
