// SPDX-License-Identifier: GPL-2.0
/*
 * The `agent` command's table (agent_command.h): linked into sieve, which
 * execs sieve-agent to run it, and into sieve-agent, which runs it, so
 * both print the same --help and the CLI's completion lists what the
 * agent parses. The options fill struct agent_opts (agent.c reads it).
 */
#include <errno.h>

#include "agent_command.h"
#include "cli.h"
#include "conf.h"

static int set_config(void *opts, const char *arg)
{
	((struct agent_opts *)opts)->cl.config = arg;
	return *arg ? 0 : -EINVAL;
}

static int set_state_dir(void *opts, const char *arg)
{
	((struct agent_opts *)opts)->cl.set[SCONF_STATE_DIR] = arg;
	return *arg == '/' ? 0 : -EINVAL;
}

static const struct cli_option opt_config = {
	"config", 'c', "FILE",
	"the settings (default $SIEVE_CONFIG, else " SCONF_CONFIG_FILE " if it exists)",
	.set = set_config, .accepts = "a file",
};
static const struct cli_option opt_state_dir = {
	"state-dir", 0, "DIR", "the store's folder, over $SIEVE_STATE_DIR and the file's state_dir",
	.set = set_state_dir, .accepts = "an absolute path",
};
static const struct cli_option opt_check = {
	"check", 0, NULL, "check the settings, print each with where it came from, and exit",
	CLI_FLAG(struct agent_opts, check),
};

const struct cli_command agent_command = {
	"agent", "the long-running agent: restores, expires, follows interfaces",
	.details = "  At start, every attachment of the store in this network namespace runs\n"
		   "  again: pins that run as recorded are adopted, others are attached anew\n"
		   "  from the store (after a reboot), interfaces not there yet are waited\n"
		   "  for. Then it expires entries every expire_interval and checks every\n"
		   "  attachment (maps behind the store rebuilt, a vanished filter or pins\n"
		   "  made again), follows interfaces\n"
		   "  that go away and come back (rtnetlink), follows the fleet's lists in\n"
		   "  Redis ([fleet]), and tells systemd READY=1\n"
		   "  (Type=notify). SIGHUP reloads the settings (a bad file keeps the old\n"
		   "  ones), SIGTERM stops. Enforcement never depends on it: the programs\n"
		   "  and maps keep dropping when it stops. A bad setting: FILE:LINE: reason,\n"
		   "  exit 2. Settings: see sieve.conf(5); each is taken from the command\n"
		   "  line, else the environment, else the file, else its default, as\n"
		   "  sieve's commands take it (--check prints where each came from).",
	.options = CLI_OPTIONS(&opt_config, &opt_state_dir, &opt_check),
	.max_args = 0,
	.run = sagent_run,
};
