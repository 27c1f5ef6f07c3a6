/* write: under construction (see write.h). */
#include "config.h"
typedef int write_unbuilt;
