# Fails if the shared library exports a dynamic symbol not named cudnnfe_*,
# or (with MANIFEST, abi/manifest.json) misses a function the header declares,
# those of the CUDNNFE_EXPERIMENTAL part included: the list never shrinks.
execute_process(COMMAND nm -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(count 0)
foreach(line ${lines})
  string(REGEX MATCH "[^ ]+$" name "${line}")
  if(name AND NOT name MATCHES "^cudnnfe_")
    message(SEND_ERROR "exported symbol not in the C API: ${line}")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
if(MANIFEST)
  # The functions of the manifest: a "name" followed by a "c_return" (whole-file
  # regexes: list-splitting the JSON's lines would merge those with brackets).
  file(READ ${MANIFEST} manifest)
  string(REGEX MATCHALL "\"name\": \"cudnnfe_[a-z0-9_]+\",[ \n]*\"c_return\"" entries
         "${manifest}")
  set(declared 0)
  foreach(entry ${entries})
    string(REGEX MATCH "cudnnfe_[a-z0-9_]+" function "${entry}")
    math(EXPR declared "${declared} + 1")
    # nm writes the version node after the name: cudnnfe_x@@cudnnfe_abi_0.
    string(FIND "${symbols}" " ${function}@" found)
    string(FIND "${symbols}" " ${function}\n" found_plain)
    if(found EQUAL -1 AND found_plain EQUAL -1)
      message(SEND_ERROR "${function} is declared in the header but not exported")
    endif()
  endforeach()
  if(declared LESS 100)
    message(SEND_ERROR "only ${declared} functions found in ${MANIFEST}")
  endif()
  message(STATUS "the ${declared} functions of ${MANIFEST} are all exported")
endif()
message(STATUS "${count} exported symbols, all cudnnfe_*")
