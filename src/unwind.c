/* unwind: under construction (see unwind.h). */
#include "config.h"
typedef int unwind_unbuilt;
