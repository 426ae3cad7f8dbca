# Writes OUT (generated/build_info.cpp) from IN with the commit checked out in SOURCE_DIR. Run at configure time and
# again at every build (the preflight_build_info target), so that `--version` and every JSON report's build_commit name
# the commit the binary was built from, not the one the build directory was configured at. configure_file leaves the
# file untouched when its text is the same: an unchanged commit rebuilds nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE PREFLIGHT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT PREFLIGHT_COMMIT)
  set(PREFLIGHT_COMMIT "unknown")
endif()
configure_file(${IN} ${OUT} @ONLY)
