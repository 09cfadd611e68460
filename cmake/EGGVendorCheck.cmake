# cmake -P EGGVendorCheck.cmake: compare a freshly generated kernel with its vendored copy.
# -DNAME=<kernel> -DGENERATED=<egg/<name> in the build tree> -DVENDORED=<VENDOR_DIR/<name>>
# -DUPDATE=<the command that updates the vendored copy> -DSTAMP=<file written on success>
# Compared: <name>.cu and include/egg/<name>.h (the manifest names machine paths, so it is not).
set(_diffs "")
foreach(_f "${NAME}.cu" "include/egg/${NAME}.h")
  if(NOT EXISTS "${VENDORED}/${_f}")
    string(APPEND _diffs "  ${VENDORED}/${_f} is missing\n")
    continue()
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${GENERATED}/${_f}" "${VENDORED}/${_f}"
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT _rc EQUAL 0)
    find_program(_diff diff)
    set(_text "")
    if(_diff)
      execute_process(COMMAND "${_diff}" -u "${VENDORED}/${_f}" "${GENERATED}/${_f}" OUTPUT_VARIABLE _text
                      ERROR_QUIET)
      string(LENGTH "${_text}" _len)
      if(_len GREATER 6000)
        string(SUBSTRING "${_text}" 0 6000 _text)
        string(APPEND _text "\n[... diff cut ...]\n")
      endif()
    endif()
    string(APPEND _diffs "  ${_f} differs:\n${_text}\n")
  endif()
endforeach()
if(_diffs)
  message("${_diffs}")  # unformatted, so the diff stays readable
  message(FATAL_ERROR "EGG: the vendored kernel '${NAME}' in ${VENDORED} differs from what EGG "
                      "generates now (diff above). Update the vendored copy with\n  ${UPDATE}\n"
                      "then review and commit it.")
endif()
file(WRITE "${STAMP}" "vendored ${NAME} matches\n")
