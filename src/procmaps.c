/* procmaps: under construction (see procmaps.h). */
#include "config.h"
typedef int procmaps_unbuilt;
