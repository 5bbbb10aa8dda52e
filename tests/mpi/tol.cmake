# The tolerant barrier (SHOAL_BARRIER=tolerant, src/mpi/coll/coll_tolerant.c).

# Pakin's Fig. 4.4 clock matrix and the Fig. 4.9 message that a single
# clock would never deliver: through the info key, and through the
# variable.
shoal_mpi_test(tol_clock SOURCES tol_clock.c NP 4)
shoal_mpi_test(tol_clock_env SOURCES tol_clock.c NP 4 ARGS env
               ENV SHOAL_BARRIER=tolerant)
# Returns at once; holds back what was sent after, not what was before.
shoal_mpi_test(tol_gate SOURCES tol_gate.c NP 2 3 5
               ENV SHOAL_BARRIER=tolerant)
# The randomized property test in both modes (same seed: same checksum),
# also with every rank waiting asleep.
shoal_mpi_test(tol_prop SOURCES tol_prop.c NP 2 5 7 ARGS 400 7
               ENV SHOAL_BARRIER=tolerant)
shoal_mpi_test(tol_prop_sleep SOURCES tol_prop.c NP 5 ARGS 300 11
               ENV SHOAL_BARRIER=tolerant SHOAL_WAIT=block)
shoal_mpi_test(tol_prop_blocking SOURCES tol_prop.c NP 5 ARGS 400 7
               ENV SHOAL_BARRIER=blocking)
# With every rank stopped now and then (shoalrun's noise, SIGSTOP).
shoal_mpi_test(tol_prop_noise SOURCES tol_prop.c NP 4 ARGS 600 3
               ENV SHOAL_BARRIER=tolerant
                   "SHOAL_NOISE=rank=all,stop=2ms,every=15ms,random")

# SHOAL_PROGRESS=thread: communication completes while ranks compute; and
# without the thread it does not (the test can tell).  Labelled thread so
# that make check-thread runs it under ThreadSanitizer.
shoal_mpi_test(progress_thread SOURCES progress_thread.c NP 2 4
               ENV SHOAL_PROGRESS=thread)
shoal_mpi_test(progress_none SOURCES progress_thread.c NP 2 ARGS none)
set_tests_properties(mp.mpi.progress_thread.np2 mp.mpi.progress_thread.np4
    PROPERTIES LABELS "mp;mpi;thread")
