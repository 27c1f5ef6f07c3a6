/* dump: under construction (see dump.h). */
#include "config.h"
typedef int dump_unbuilt;
