// SPDX-License-Identifier: GPL-2.0
/*
 * The layer policy on both sides: each growth sequence of
 * tests/cases/layer_seqs.h runs on a /dev/sieve filter and on a libsieve
 * local filter, and the two traces must be identical (every add's answer,
 * the add at which each layer came, and each layer's geometry, capacity,
 * rate, items and table), and both must agree with the policy as that
 * header writes it out. Prints KTAP.
 *
 * Usage: sieve_layers_test
 */
#include <fcntl.h>

#include "dev.h"
#include "../cases/layer_seqs.h"

struct ls_dev {
	struct layer_side side;
	struct sieve_dev *dev;
	int id;
};

static int ls_dev_create(struct layer_side *s, const struct sieve_params *p, int fd)
{
	struct ls_dev *d = (struct ls_dev *)s;

	d->id = p ? sieve_dev_create(d->dev, "lt.seq", p) :
		    sieve_dev_import(d->dev, "lt.seq", 0, fd);
	return d->id < 0 ? d->id : 0;
}

static int ls_dev_add(struct layer_side *s, const void *key, u32 len)
{
	struct ls_dev *d = (struct ls_dev *)s;

	return sieve_dev_add(d->dev, d->id, key, len, 0);
}

static int ls_dev_nlayers(struct layer_side *s)
{
	struct ls_dev *d = (struct ls_dev *)s;
	struct sieve_info info;
	int err = sieve_dev_info(d->dev, d->id, &info);

	return err ? err : (int)info.nlayers;
}

static int ls_dev_save(struct layer_side *s, int fd)
{
	struct ls_dev *d = (struct ls_dev *)s;

	return sieve_dev_export(d->dev, d->id, fd, NULL);
}

static void ls_dev_destroy(struct layer_side *s)
{
	struct ls_dev *d = (struct ls_dev *)s;

	sieve_dev_destroy(d->dev, d->id);
}

static void run_seq(struct sieve_dev *dev, const struct layer_seq *q)
{
	struct ls_dev kernel = { .side = {
		.name = "/dev/sieve", .create = ls_dev_create, .add = ls_dev_add,
		.nlayers = ls_dev_nlayers, .save = ls_dev_save, .destroy = ls_dev_destroy,
	}, .dev = dev };
	struct ls_local local = ls_local_side();
	struct layer_trace kt, lt;
	const char *why;
	int kerr = layer_run(q, &kernel.side, &kt);
	int lerr = layer_run(q, &local.side, &lt);

	if (!ktap_ok(!kerr && !lerr, "%s: ran on both sides (%s, %s)", q->name, errname(kerr),
		     errname(lerr)))
		return;
	why = layer_trace_diff(&kt, &lt);
	ktap_ok(!why, "%s: kernel and libsieve grow the same %u layers%s%s", q->name,
		kt.nlayers, why ? ": " : "", why ? why : "");
	why = layer_trace_check(q, &kt);
	ktap_ok(!why, "%s: the kernel's layers follow the policy%s%s", q->name,
		why ? ": " : "", why ? why : "");
	why = layer_trace_check(q, &lt);
	ktap_ok(!why, "%s: libsieve's layers follow the policy%s%s", q->name,
		why ? ": " : "", why ? why : "");
	diag("%s: %u layers, %u new, %u present, %u refused (first at add %d)", q->name,
	     kt.nlayers, kt.added, kt.present, kt.enospc, kt.first_enospc);
}

int main(void)
{
	struct sieve_dev *dev = NULL;
	int err;
	u32 i;

	ktap_begin("layers");
	err = sieve_dev_open(NULL, true, &dev);
	if (err) {
		printf("Bail out! cannot open the device: %s\n", errname(err));
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(layer_seqs); i++)
		run_seq(dev, &layer_seqs[i]);
	sieve_dev_close(dev);
	return ktap_end();
}
