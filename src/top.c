/* top: under construction (see top.h). */
#include "config.h"
typedef int top_unbuilt;
