/* write_folded: under construction (see write_folded.h). */
#include "config.h"
typedef int write_folded_unbuilt;
