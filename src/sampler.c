/* sampler: under construction (see sampler.h). */
#include "config.h"
typedef int sampler_unbuilt;
