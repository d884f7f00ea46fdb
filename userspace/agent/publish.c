// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp block|unblock|allow|disallow --fleet`, the part that needs
 * hiredis: sieve parses and checks the command line, then execs
 * `sieve-agent __publish CONFIG LIST OP EXPIRES ORIGIN ENTRY...` (agent.h),
 * each ENTRY as sxdp_format_entry() writes it. What the user sees (the
 * errors, the line printed) is what sieve printed when it linked hiredis
 * itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "cli.h"

static const char *const done[SAGENT_FLEET_NR_OPS] = {
	[SAGENT_FLEET_BLOCK] = "blocked", [SAGENT_FLEET_UNBLOCK] = "unblocked",
	[SAGENT_FLEET_ALLOW] = "allowed", [SAGENT_FLEET_DISALLOW] = "disallowed",
};

static int parse_op(const char *word, enum sagent_fleet_op *op)
{
	for (*op = 0; *op < SAGENT_FLEET_NR_OPS; (*op)++)
		if (!strcmp(word, sagent_fleet_op_name(*op)))
			return 0;
	return -EINVAL;
}

int sagent_publish_main(int argc, char **argv)
{
	char err[512] = "", name[300];
	struct sagent_config c;
	struct sxdp_list l = { 0 };
	struct sieve_xdp_key key;
	enum sagent_fleet_op op;
	const char *why = NULL;
	long long expires;
	char *end;
	int i, ret;

	/* __publish CONFIG LIST OP EXPIRES ORIGIN ENTRY... */
	if (argc < 7 || parse_op(argv[3], &op))
		return cli_error("%s: not a command for people (see 'sieve xdp block --help')",
				 SAGENT_PUBLISH_CMD);
	errno = 0;
	if (!strcmp(argv[4], SAGENT_PUBLISH_KEEP))
		expires = SAGENT_EXPIRES_KEEP;
	else if ((expires = strtoll(argv[4], &end, 10)) < 0 || errno || *end)
		return cli_error("%s: bad expiry '%s'", SAGENT_PUBLISH_CMD, argv[4]);
	for (i = 6; i < argc; i++) {
		if (sxdp_parse_entry(argv[i], &key, &why)) {
			sxdp_list_free(&l);
			return cli_error("'%s': %s", argv[i], why);
		}
		if (sxdp_list_add(&l, &key)) {
			sxdp_list_free(&l);
			return cli_error("out of memory");
		}
	}
	ret = sagent_config_load(argv[1], &c, err, sizeof(err));
	if (!ret && !c.fleet.on) {
		snprintf(err, sizeof(err), "%s: no [fleet] redis to publish to", argv[1]);
		ret = -EINVAL;
	}
	if (!ret)
		ret = sagent_fleet_publish(&c.fleet, argv[2], op, &l, expires, argv[5], err,
					   sizeof(err));
	if (!ret)
		printf("%s: published %s %zu to %s\n", argv[2], done[op], l.n,
		       sagent_redis_name(&c.fleet, name, sizeof(name)));
	sxdp_list_free(&l);
	return ret ? cli_error("%s", err) : EXIT_OK;
}
