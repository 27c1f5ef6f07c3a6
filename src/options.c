/* options: under construction (see options.h). */
#include "config.h"
typedef int options_unbuilt;
