/* target: under construction (see target.h). */
#include "config.h"
typedef int target_unbuilt;
