/* options_config: each room's config derived from the options, the one
 * place each is (see options.h). */
#include "config.h"

#include "options.h"
#include "outfile.h"

void options_build_config(const struct options *o, const char *command_line,
			  struct build_config *out)
{
	*out = (struct build_config){
		.rate = o->rate, .idle = o->idle, .max_depth = o->max_depth,
		.no_inline = o->no_inline, .addresses = o->addresses, .quiet = o->quiet,
		.verbose = o->verbose, .tids = o->ntids ? o->tids : NULL, .ntids = o->ntids,
		.groups = o->groups, .ngroups = o->ngroups, .labels = o->labels,
		.nlabels = o->nlabels, .command_line = command_line,
	};
}

void options_session_config(const struct options *o, struct session_config *out)
{
	bool to_stdout = false;
	for (size_t i = 0; i < o->noutputs; i++)
		if (outfile_is_stdout(o->outputs[i].path))
			to_stdout = true;
	*out = (struct session_config){
		.pid = o->pid, .command = o->command, .children = o->children,
		.seize_mode = o->seize_mode, .profile_to_stdout = to_stdout, .backend = o->backend,
		.rate = o->rate, .idle = o->idle, .max_depth = o->max_depth,
		.python = !o->no_python, .kernel = !o->no_kernel, .stack_window = o->stack_window,
		.window_grows = !o->stack_window_given, .tids = o->ntids ? o->tids : NULL,
		.ntids = o->ntids, .rt_priority = o->rt_priority, .duration = o->duration,
		.quiet = o->quiet, .verbose = o->verbose, .tell = report_notice,
	};
}

void options_report_config(const struct options *o, struct report_config *out)
{
	*out = (struct report_config){
		.command = o->command, .tids = o->ntids ? o->tids : NULL, .ntids = o->ntids,
		.backend = o->backend, .rate = o->rate, .duration = o->duration, .idle = o->idle,
		.children = o->children, .quiet = o->quiet, .verbose = o->verbose,
		.max_depth = o->max_depth, .stack_window = o->stack_window,
	};
}

void options_dump_config(const struct options *o, struct dump_config *out)
{
	*out = (struct dump_config){
		.pid = o->pid, .max_depth = o->max_depth, .stack_window = o->stack_window,
		.no_inline = o->no_inline, .addresses = o->addresses, .python = !o->no_python,
		.kernel = !o->no_kernel, .children = o->children, .verbose = o->verbose,
	};
}
