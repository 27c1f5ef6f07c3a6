/* profiler: under construction (see profiler.h). */
#include "config.h"
typedef int profiler_unbuilt;
