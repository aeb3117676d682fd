# The CUDA backend: libleapfrog_cuda.so, built only where CMake finds nvcc (the CPU build
# never depends on it). The core opens it at run time (src/backend/cuda_loader.cpp), so the
# core, the addon and the tools need no CUDA runtime or driver; the library links the CUDA
# runtime statically and needs only the NVIDIA driver.
#
#   -DLEAPFROG_CUDA=OFF                  never build it
#   -DLEAPFROG_CUDA_LINEINFO=ON          source lines in the kernels (profiling with ncu)
#   -DCMAKE_CUDA_ARCHITECTURES="90"      only Hopper (faster builds; default: sm_80, 86, 89, 90
#                                        and compute_90 PTX for newer GPUs)
# Included from native/CMakeLists.txt after leapfrog_core, the tests and the tools exist.

option(LEAPFROG_CUDA "Build the CUDA backend library when nvcc is found" ON)
option(LEAPFROG_CUDA_LINEINFO "CUDA kernels with source line information (for ncu)" OFF)

# The loader in the core uses dlopen/dladdr.
target_link_libraries(leapfrog_core PUBLIC ${CMAKE_DL_LIBS})

if(LEAPFROG_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 80-real 86-real 89-real 90)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc 13's C++20 flag (the project's C++20 carries over).
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    file(GLOB LF_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/cuda/*.cu)
    add_library(leapfrog_cuda SHARED ${LF_CUDA_SOURCES})
    # The directory's -Wall etc. are host-compiler flags nvcc does not take: start clean.
    set_property(TARGET leapfrog_cuda PROPERTY COMPILE_OPTIONS "")
    set_target_properties(leapfrog_cuda PROPERTIES
      CUDA_STANDARD 20
      CUDA_EXTENSIONS OFF
      CUDA_RUNTIME_LIBRARY Static
      CUDA_VISIBILITY_PRESET hidden
      CXX_VISIBILITY_PRESET hidden
      POSITION_INDEPENDENT_CODE ON
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    target_include_directories(leapfrog_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    # No float contraction: the kernels spell out their fused multiply-adds, so every result
    # is one fixed sequence of roundings (batched rows equal one-row results).
    target_compile_options(leapfrog_cuda PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -Xcompiler=-Wall,-Wno-unused-parameter>)
    if(LEAPFROG_CUDA_LINEINFO)
      target_compile_options(leapfrog_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
    endif()
    target_link_options(leapfrog_cuda PRIVATE -Wl,--no-undefined)
    # The core knows the library was built (the registry then lists CUDA as unavailable,
    # with the reason, where no device is present).
    target_compile_definitions(leapfrog_core PRIVATE LEAPFROG_CUDA_BUILT=1)
    foreach(t IN ITEMS cuda_ops_test lf_bench lf_run leapfrog_native backend_ops_test)
      if(TARGET ${t})
        add_dependencies(${t} leapfrog_cuda)
      endif()
    endforeach()
    message(STATUS "Leapfrog: CUDA backend enabled (${CMAKE_CUDA_COMPILER}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "Leapfrog: CUDA backend not built (no nvcc found)")
  endif()
endif()
