# unit_list.cmake - the list of unit tests in tests/CMakeLists.txt and the
# files of tests/unit/ must agree, or configuring fails with a message that
# names the file and the fix (tests/cmake/unit_list.sh checks both ways):
#
#   tc_unit_list_begin(DIR)  every DIR/test_*.c must be listed by the time
#                            the current directory is configured (a deferred
#                            check, so lines may go anywhere); the glob
#                            re-runs configuring when files come or go
#   tc_unit_list_add(NAME)   NAME is listed: DIR/NAME.c must exist
macro(tc_unit_list_begin dir)
  set(TC_UNIT_DIR ${dir})
  file(GLOB TC_UNIT_FILES CONFIGURE_DEPENDS ${dir}/test_*.c)
  cmake_language(DEFER CALL tc_unit_list_check)
endmacro()

function(tc_unit_list_add name)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${TC_UNIT_DIR}/${name}.c)
  if(NOT EXISTS ${TC_UNIT_DIR}/${name}.c)
    message(FATAL_ERROR "tc_unit(${name}) lists a unit test, but ${rel} does not exist")
  endif()
  set_property(DIRECTORY APPEND PROPERTY TC_UNIT_LISTED ${name})
endfunction()

function(tc_unit_list_check)
  get_property(listed DIRECTORY PROPERTY TC_UNIT_LISTED)
  foreach(f ${TC_UNIT_FILES})
    get_filename_component(name ${f} NAME_WE)
    if(NOT name IN_LIST listed)
      file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${f})
      message(FATAL_ERROR "${rel} is not built: add a line 'tc_unit(${name} LIBS...)' to "
                          "tests/CMakeLists.txt")
    endif()
  endforeach()
endfunction()
