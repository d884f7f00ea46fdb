// SPDX-License-Identifier: GPL-2.0
/*
 * A program built against an installed libsieve (pkg-config sieve), as a
 * user of the library would: a local filter through a snapshot file, and
 * the device client without a device. Prints "ok" and exits 0, or says what
 * failed and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <libsieve.h>

static int fail(const char *what, int ret)
{
	printf("%s: %d\n", what, ret);
	return 1;
}

int main(int argc, char **argv)
{
	struct sieve_params p = {
		.type = SIEVE_CUCKOO, .flags = SIEVE_CREATE_SEED, .capacity = 1000,
		.fpp_ppb = SIEVE_PPB / 100, .seed = 42,
	};
	struct sieve_local *f, *g;
	struct sieve_dev *dev;
	struct sieve_info info;
	int ret;

	if (argc != 2)
		return fail("usage: use_libsieve SNAPSHOT_PATH", -EINVAL);
	if ((ret = sieve_local_create(&p, &f)))
		return fail("sieve_local_create", ret);
	if ((ret = sieve_local_add(f, "hello", 5, 0)) != 0)
		return fail("sieve_local_add", ret);
	if ((ret = sieve_local_save_path(f, argv[1])))
		return fail("sieve_local_save_path", ret);
	sieve_local_destroy(f);
	if ((ret = sieve_local_load_path(argv[1], &g)))
		return fail("sieve_local_load_path", ret);
	if ((ret = sieve_local_query(g, "hello", 5)) != 1)
		return fail("sieve_local_query after load", ret);
	sieve_local_info(g, &info);
	if (info.geo.seed != 42 || info.items != 1)
		return fail("sieve_local_info", (int)info.items);
	sieve_local_destroy(g);
	if ((ret = sieve_dev_open("/nonexistent/sieve", false, &dev)) != -ENOENT)
		return fail("sieve_dev_open of a missing path", ret);
	printf("ok\n");
	return 0;
}
