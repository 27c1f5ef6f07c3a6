/* symbolize: under construction (see symbolize.h). */
#include "config.h"
typedef int symbolize_unbuilt;
