/* write_pprof: under construction (see write_pprof.h). */
#include "config.h"
typedef int write_pprof_unbuilt;
