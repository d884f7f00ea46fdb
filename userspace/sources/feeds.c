// SPDX-License-Identifier: GPL-2.0
/*
 * One refresh of a [feed NAME] (feeds.h): fetch, judge, load. Nothing is
 * written unless every check passed; the validators and the body's hash
 * move on only with a load, so a refused download is fetched and judged
 * again at the next interval rather than hidden behind a 304.
 */
#define _GNU_SOURCE		/* strncasecmp, fmemopen */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "feeds.h"
#include "ops.h"

/* Connecting takes at most this, within the feed's timeout. */
#define FEED_CONNECT_TIMEOUT_MS	10000L

/* FNV-1a: the same body twice is no change, whatever the server's headers say. */
static uint64_t body_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* An error page served as the feed: by its type, or by how it starts. */
static bool looks_html(const struct ssrc_http_response *resp)
{
	const char *b = resp->body;

	if (!strncasecmp(resp->content_type, "text/html", 9) ||
	    !strncasecmp(resp->content_type, "application/xhtml", 17))
		return true;
	while (isspace((unsigned char)*b))
		b++;
	return !strncasecmp(b, "<!doctype html", 14) || !strncasecmp(b, "<html", 5);
}

static void refuse(struct ssrc_feed_result *r, enum ssrc_feed_refusal why, const char *fmt,
		   const char *text)
{
	r->outcome = SSRC_FEED_REFUSED;
	r->reason = why;
	snprintf(r->msg, sizeof(r->msg), fmt, text);
}

/* The body's entries in the feed's format; 0, or refused with the first bad line. */
static int parse_body(const struct sconf_feed_config *f, const struct ssrc_http_response *resp,
		      struct sxdp_keys *l, struct ssrc_feed_result *r)
{
	char err[512] = "";
	FILE *mem;
	int ret;

	if (strlen(resp->body) != resp->body_len) {
		refuse(r, SSRC_FEED_PARSE, "%s: a NUL byte in the body: not a text feed", f->url);
		return -EINVAL;
	}
	if (!resp->body_len)
		return 0;	/* fmemopen() takes no empty buffer */
	mem = fmemopen(resp->body, resp->body_len, "r");
	if (!mem) {
		refuse(r, SSRC_FEED_PARSE, "%s: reading the body: out of memory", f->url);
		return -ENOMEM;
	}
	ret = sxdp_feed_read_stream(mem, f->url, f->format, l, NULL, err, sizeof(err));
	fclose(mem);
	if (ret) {
		/* The first bad line: the rest are like it, and a log line is one line. */
		err[strcspn(err, "\n")] = '\0';
		refuse(r, SSRC_FEED_PARSE, "%s", err[0] ? err : strerror(-ret));
	}
	return ret;
}

/* The judged entries loaded as origin @f->name: refused with the store's reason. */
static void load(struct sxdp_store *s, const struct sconf_feed_config *f,
		 const struct sxdp_keys *l, struct ssrc_feed_result *r)
{
	struct sxdp_store_attrs a = {
		.origin = f->name, .now = time(NULL),
		/* min_entries 0 is the operator's consent to an empty feed. */
		.refuse_empty = f->min_entries > 0,
	};
	struct sxdp_op_result res;
	char err[400] = "", why[SXDP_WHY_MAX];
	int ret = sxdp_op_load(s, f->list, l, &a, &res, err, sizeof(err));

	if (ret) {
		refuse(r, SSRC_FEED_LOAD, "loading it: %s", err[0] ? err : strerror(-ret));
		return;
	}
	r->outcome = SSRC_FEED_LOADED;
	r->added = res.changed;
	r->dropped = res.dropped;
	r->unreached = res.unreached;
	if (res.unreached)
		snprintf(r->msg, sizeof(r->msg), "%zu interface%s of list %s not enforcing it "
			 "(first: %s)", res.unreached, res.unreached == 1 ? "" : "s", f->list,
			 sxdp_enforce_why(res.unreached_ifs[0].state, res.unreached_ifs[0].iface,
					  res.unreached_ifs[0].err, why, sizeof(why)));
}

/* After a good download: judged, then loaded unless it is the last load's body. */
static void judge_and_load(struct sxdp_store *s, const struct sconf_feed_config *f,
			   struct ssrc_feed_state *st, const struct ssrc_http_response *resp,
			   struct ssrc_feed_result *r)
{
	uint64_t hash = body_hash(resp->body, resp->body_len);
	struct sxdp_keys l = { 0 };
	enum ssrc_feed_refusal why;
	char num[96];

	if (st->loaded && hash == st->body_hash) {
		r->outcome = SSRC_FEED_UNCHANGED;
		goto out_validators;
	}
	if (looks_html(resp)) {
		refuse(r, SSRC_FEED_HTML, "%s: an HTML page, not a feed", f->url);
		return;
	}
	if (parse_body(f, resp, &l, r))
		goto out_free;
	r->entries = l.n;
	if (sxdp_store_count(s, f->list, -1, f->name, &r->held)) {
		refuse(r, SSRC_FEED_LOAD, "%s: counting its entries in the store failed", f->name);
		goto out_free;
	}
	if (!ssrc_feed_acceptable(f, r->held, l.n, &why)) {
		snprintf(num, sizeof(num), "%zu entries where the store holds %llu", l.n,
			 (unsigned long long)r->held);
		refuse(r, why, why == SSRC_FEED_MIN_ENTRIES ? "%s: fewer than min_entries" :
			       "%s: a shrink past max_shrink", num);
		goto out_free;
	}
	load(s, f, &l, r);
	if (r->outcome != SSRC_FEED_LOADED)
		goto out_free;
	st->body_hash = hash;
	st->loaded = true;
out_validators:
	snprintf(st->etag, sizeof(st->etag), "%s", resp->etag);
	/*
	 * Modification times have whole seconds: a copy changed again within
	 * the second it was fetched in would look unchanged to the next
	 * If-Modified-Since. Such a time is not kept; the body's hash stands
	 * in for it.
	 */
	st->modified = resp->modified < (int64_t)time(NULL) - 1 ? resp->modified : 0;
out_free:
	sxdp_keys_free(&l);
}

void ssrc_feed_refresh(struct sxdp_store *s, const struct sconf_feed_config *f,
		       struct ssrc_feed_state *st, const atomic_bool *cancel,
		       struct ssrc_feed_result *r)
{
	struct ssrc_http_request req = {
		.url = f->url, .max_body = SSRC_FEED_MAX_BYTES,
		.timeout_ms = (long)f->timeout_s * 1000,
		.connect_timeout_ms = FEED_CONNECT_TIMEOUT_MS,
		/* Validators only of a copy that was loaded: see the top. */
		.etag = st->loaded ? st->etag : NULL,
		.modified_since = st->loaded ? st->modified : 0,
		.cancel = cancel,
	};
	struct ssrc_http_response resp;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = ssrc_http_get(&req, &resp);
	r->http_status = resp.status;
	if (ret == SSRC_HTTP_UNCHANGED)
		r->outcome = SSRC_FEED_UNCHANGED;
	else if (ret < 0)
		refuse(r, SSRC_FEED_FETCH, "%s", resp.err);
	else
		judge_and_load(s, f, st, &resp, r);
	ssrc_http_response_free(&resp);
}
