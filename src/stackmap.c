/* stackmap: under construction (see stackmap.h). */
#include "config.h"
typedef int stackmap_unbuilt;
