/* write_svg: under construction (see write_svg.h). */
#include "config.h"
typedef int write_svg_unbuilt;
