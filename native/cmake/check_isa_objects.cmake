# Fails the build when an object compiled for one instruction set (*_avx2, *_avxvnni,
# *_avx512, *_neon_dotprod, *_neon_i8mm) defines a weak (shared, inline/template) symbol. The linker keeps
# one copy of such a symbol for every caller, possibly the one built with -mavx512f, and a CPU
# without that instruction set would then crash in "portable" code. Headers included by these
# files keep their helpers in anonymous namespaces for this reason.
#   cmake -DOBJ_DIR=<dir> -DNM=<nm> -P check_isa_objects.cmake
file(GLOB_RECURSE objs "${OBJ_DIR}/*_avx2.cpp.o" "${OBJ_DIR}/*_avxvnni.cpp.o"
     "${OBJ_DIR}/*_avx512.cpp.o" "${OBJ_DIR}/*_neon_dotprod.cpp.o"
     "${OBJ_DIR}/*_neon_i8mm.cpp.o")
set(bad "")
foreach(obj ${objs})
  execute_process(COMMAND ${NM} -C --defined-only ${obj} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${obj}")
  endif()
  string(REGEX MATCHALL "[^\n]* [WVu] [^\n]*" weak "${syms}")
  foreach(line ${weak})
    if(NOT line MATCHES "__gxx_personality")
      string(APPEND bad "\n  ${obj}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "instruction-set objects define shared symbols (move the code into an "
                      "anonymous namespace or out of the file):${bad}")
endif()
