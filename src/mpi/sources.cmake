# The MPI layer.  Each area lists its files in its own file, so areas can
# grow independently.
foreach(area core dt comm coll)
    include(${CMAKE_CURRENT_LIST_DIR}/sources-${area}.cmake)
endforeach()
