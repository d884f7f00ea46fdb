// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp block|unblock|allow|disallow --fleet`, the part that needs
 * hiredis: sieve parses and checks the command line, then execs
 * `sieve-agent __publish CONFIG LIST OP EXPIRES ORIGIN ENTRY...` (fleet.h),
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
#include "fleet.h"

int sagent_publish_main(int argc, char **argv)
{
	char err[512] = "", name[300];
	struct sconf_config c;
	struct sxdp_keys l = { 0 };
	struct sieve_xdp_key key;
	enum sxdp_list_op op;
	const char *why = NULL;
	long long expires;
	char *end;
	int i, ret;

	/* __publish CONFIG LIST OP EXPIRES ORIGIN ENTRY... */
	if (argc < 7 || sxdp_list_op_parse(argv[3], &op))
		return cli_error("%s: not a command for people (see 'sieve xdp block --help')",
				 SFLEET_PUBLISH_CMD);
	errno = 0;
	if (!strcmp(argv[4], SFLEET_PUBLISH_KEEP))
		expires = SFLEET_EXPIRES_KEEP;
	else if ((expires = strtoll(argv[4], &end, 10)) < 0 || errno || *end)
		return cli_error("%s: bad expiry '%s'", SFLEET_PUBLISH_CMD, argv[4]);
	for (i = 6; i < argc; i++) {
		if (sxdp_parse_entry(argv[i], &key, &why)) {
			sxdp_keys_free(&l);
			return cli_error("'%s': %s", argv[i], why);
		}
		if (sxdp_keys_add(&l, &key)) {
			sxdp_keys_free(&l);
			return cli_error("out of memory");
		}
	}
	ret = sconf_config_load(argv[1], &c, err, sizeof(err));
	if (!ret && !c.fleet.on) {
		snprintf(err, sizeof(err), "%s: no [fleet] redis to publish to", argv[1]);
		ret = -EINVAL;
	}
	if (!ret)
		ret = sfleet_publish(&c.fleet, argv[2], op, &l, expires, argv[5], err,
					   sizeof(err));
	if (!ret)
		printf("%s: published %s %zu to %s\n", argv[2], sxdp_list_op_done(op), l.n,
		       sfleet_redis_name(&c.fleet, name, sizeof(name)));
	sxdp_keys_free(&l);
	return ret ? cli_error("%s", err) : EXIT_OK;
}
