// The CPU backend's memory is host memory: tests hand it host arrays through dev().
#pragma once
#include "backend/backend.h"

template <class T>
leapfrog::DevicePtr<T> dev(T* p) {
  return leapfrog::DevicePtr<T>(p);
}
