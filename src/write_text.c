/* write_text: under construction (see write_text.h). */
#include "config.h"
typedef int write_text_unbuilt;
