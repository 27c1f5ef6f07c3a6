/* profile: under construction (see profile.h). */
#include "config.h"
typedef int profile_unbuilt;
