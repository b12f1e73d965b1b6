# Run by the build (not by configure): writes the header that names the commit `ply --version`
# reports, and rewrites it only when the commit changed, so that only help.cc is compiled again.
# -DSOURCE_DIR=... -DOUT=.../ply_commit.h
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE describe
                  OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET
                  RESULT_VARIABLE failed)
  if(NOT failed AND describe)
    set(commit "${describe}")
  endif()
endif()
set(text "#define PLY_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
