/* top: --top, a live terminal view (ncurses) of the hottest functions over a
 * sliding window, refreshed every second; 'q' quits and detaches cleanly.
 * Refuses with a clear error when stdout is not a terminal. Returns a
 * CS_EXIT_* status. */
#ifndef CSAMPLER_TOP_H
#define CSAMPLER_TOP_H

#include "options.h"

int top_run(const struct options *o);

#endif
