// SPDX-License-Identifier: GPL-2.0
/*
 * A Local API's stream reply as list changes (crowdsec.h). The body is
 * read by json-c, never by hand; each decision is judged alone, so that
 * garbage in one (a value that is no address, a duration of 10^30 hours,
 * a number where a string belongs) costs that decision only, counted
 * under its origin and reason.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <json-c/json.h>

#include "crowdsec.h"

/* json-c's nesting bound: the stream's object is 3 deep. */
#define SCS_JSON_DEPTH		8
#define NS_PER_S		1000000000LL
#define DURATION_MAX_NS		(SCS_DURATION_MAX_S * NS_PER_S)

const char *scs_skip_name(enum scs_skip why)
{
	static const char *const names[SCS_NR_SKIPS] = {
		[SCS_SKIP_MALFORMED] = "malformed", [SCS_SKIP_NOT_ADDRESS] = "not_address",
		[SCS_SKIP_DURATION] = "duration", [SCS_SKIP_EXPIRED] = "expired",
		[SCS_SKIP_SCOPE] = "scope", [SCS_SKIP_TYPE] = "type",
		[SCS_SKIP_ORIGIN] = "origin",
	};

	return (unsigned int)why < SCS_NR_SKIPS ? names[why] : "unknown";
}

/* ---- Go durations ---- */

/* A unit of Go's time.ParseDuration at @s: its length in ns, and its length in *@len. */
static int64_t unit_ns(const char *s, size_t *len)
{
	static const struct { const char *word; int64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
		{ "ms", 1000000 }, { "h", 3600 * NS_PER_S }, { "m", 60 * NS_PER_S },
		{ "s", NS_PER_S },
	};
	size_t i;

	/* ms before m, and m only when not ms: the table's order. */
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		*len = strlen(units[i].word);
		if (!strncmp(s, units[i].word, *len))
			return units[i].ns;
	}
	return 0;
}

/*
 * One "12.5h" component at *@s into *@ns (added), bounded by
 * DURATION_MAX_NS: digits, an optional fraction, a unit.
 */
static int component(const char **s, int64_t *ns)
{
	int64_t whole = 0, frac = 0, scale = 1, unit, add;
	const char *p = *s;
	bool digits = false;
	size_t len;

	for (; isdigit((unsigned char)*p); p++, digits = true) {
		if (whole > DURATION_MAX_NS / 10)
			return -EINVAL;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		/* Past nine digits a fraction adds less than a nanosecond a second. */
		for (p++; isdigit((unsigned char)*p); p++, digits = true)
			if (scale < NS_PER_S) {
				frac = frac * 10 + (*p - '0');
				scale *= 10;
			}
	}
	unit = digits ? unit_ns(p, &len) : 0;
	if (!unit || whole > DURATION_MAX_NS / unit)
		return -EINVAL;
	add = whole * unit + (int64_t)((__int128)frac * unit / scale);
	if (add > DURATION_MAX_NS - *ns)
		return -EINVAL;
	*ns += add;
	*s = p + len;
	return 0;
}

int scs_parse_duration(const char *s, int64_t *seconds)
{
	bool neg = *s == '-';
	int64_t ns = 0;

	if (*s == '-' || *s == '+')
		s++;
	if (!strcmp(s, "0")) {
		*seconds = 0;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s)
		if (component(&s, &ns))
			return -EINVAL;
	/* Rounded away from zero: a ban's last fraction of a second is still a ban. */
	*seconds = (ns + NS_PER_S - 1) / NS_PER_S;
	if (neg)
		*seconds = -*seconds;
	return 0;
}

/* ---- decisions ---- */

bool scs_origin_taken(const struct sconf_crowdsec_config *cfg, const char *origin)
{
	bool any_taken = false;
	unsigned int i;

	for (i = 0; i < cfg->nr_origins; i++) {
		if (!strcmp(cfg->origins[i].name, origin))
			return !cfg->origins[i].skip;
		any_taken |= !cfg->origins[i].skip;
	}
	return !any_taken;
}

static bool type_taken(const struct sconf_crowdsec_config *cfg, const char *type)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_types; i++)
		if (!strcasecmp(cfg->types[i], type))
			return true;
	return false;
}

/* Field @name of @d if it is a string, else NULL. */
static const char *field(json_object *d, const char *name)
{
	json_object *v;

	if (!json_object_object_get_ex(d, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The changes of @origin, made if new; NULL if there is no room for another. */
static struct scs_changes *changes_of(struct scs_reply *r, const char *origin)
{
	struct scs_changes *c;
	unsigned int i;

	for (i = 0; i < r->nr_origins; i++)
		if (!strcmp(r->origins[i].origin, origin))
			return &r->origins[i];
	if (r->nr_origins == SCS_MAX_ORIGINS)
		return NULL;
	c = &r->origins[r->nr_origins++];
	snprintf(c->origin, sizeof(c->origin), "%s", origin);
	return c;
}

static void skip(struct scs_reply *r, struct scs_changes *c, enum scs_skip why,
		 const char *value, const char *origin)
{
	if (c)
		c->skipped[why]++;
	else
		r->skipped[why]++;
	if (!r->first[why][0])
		snprintf(r->first[why], sizeof(r->first[why]), "value '%.40s' of origin '%.40s'",
			 value ? value : "?", origin ? origin : "?");
}

/* The value of a decision of @scope as a key: 0, or SCS_SKIP_NOT_ADDRESS. */
static int value_key(const char *value, bool range, struct sieve_xdp_key *key)
{
	const char *why;

	if (strlen(value) > SCS_VALUE_MAX || sxdp_parse_entry(value, key, &why))
		return SCS_SKIP_NOT_ADDRESS;
	if (key->kind == SIEVE_XDP_SRC || (range && key->kind == SIEVE_XDP_PREFIX))
		return 0;
	return SCS_SKIP_NOT_ADDRESS;
}

static int add_block(struct scs_changes *c, const struct sieve_xdp_key *key, int64_t expires)
{
	int64_t *e;
	size_t cap;

	if (c->block.n == c->expires_cap) {
		cap = c->expires_cap ? 2 * c->expires_cap : 256;
		e = realloc(c->expires, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->expires = e;
		c->expires_cap = cap;
	}
	if (sxdp_keys_add(&c->block, key))
		return -ENOMEM;
	c->expires[c->block.n - 1] = expires;
	return 0;
}

/*
 * One decision of "new" (@is_new) or "deleted": its key added to its
 * origin's changes, or a skip counted. 0 or -ENOMEM.
 */
static int decision(struct scs_reply *r, json_object *d, bool is_new, int64_t now,
		    const struct sconf_crowdsec_config *cfg)
{
	const char *origin, *scope, *type, *value, *duration;
	struct sieve_xdp_key key;
	struct scs_changes *c;
	int64_t secs;
	bool range;
	int why;

	origin = json_object_is_type(d, json_type_object) ? field(d, "origin") : NULL;
	value = origin ? field(d, "value") : NULL;
	if (!origin || !sconf_cs_word_ok(origin, strlen(origin))) {
		skip(r, NULL, SCS_SKIP_MALFORMED, value, origin);
		return 0;
	}
	c = changes_of(r, origin);
	if (!c || !scs_origin_taken(cfg, origin)) {
		skip(r, c, SCS_SKIP_ORIGIN, value, origin);
		return 0;
	}
	scope = field(d, "scope");
	type = field(d, "type");
	duration = field(d, "duration");
	if (!scope || !type || !value || (is_new && !duration)) {
		skip(r, c, SCS_SKIP_MALFORMED, value, origin);
		return 0;
	}
	range = !strcasecmp(scope, "range");
	if (!(range ? cfg->scopes & SCONF_CS_SCOPE_RANGE :
	      !strcasecmp(scope, "ip") && cfg->scopes & SCONF_CS_SCOPE_IP)) {
		skip(r, c, SCS_SKIP_SCOPE, value, origin);
		return 0;
	}
	if (!type_taken(cfg, type)) {
		skip(r, c, SCS_SKIP_TYPE, value, origin);
		return 0;
	}
	why = value_key(value, range, &key);
	if (!why && is_new && scs_parse_duration(duration, &secs))
		why = SCS_SKIP_DURATION;
	else if (!why && is_new && secs <= 0)
		why = SCS_SKIP_EXPIRED;
	if (why) {
		skip(r, c, why, value, origin);
		return 0;
	}
	return is_new ? add_block(c, &key, now + secs) : sxdp_keys_add(&c->unblock, &key);
}

/* "new" or "deleted": an array, or null (the stream's way of saying none). */
static int decisions(struct scs_reply *r, json_object *top, const char *name, int64_t now,
		     const struct sconf_crowdsec_config *cfg, char *err, size_t errlen)
{
	json_object *a;
	size_t i, n;
	int ret;

	if (!json_object_object_get_ex(top, name, &a) || !a)
		return 0;
	if (!json_object_is_type(a, json_type_array)) {
		snprintf(err, errlen, "\"%s\" is neither an array nor null", name);
		return -EBADMSG;
	}
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		ret = decision(r, json_object_array_get_idx(a, i), name[0] == 'n', now, cfg);
		if (ret) {
			snprintf(err, errlen, "out of memory");
			return ret;
		}
	}
	return 0;
}

int scs_reply_parse(const char *body, size_t len, int64_t now,
		    const struct sconf_crowdsec_config *cfg, struct scs_reply *r, char *err,
		    size_t errlen)
{
	json_tokener *tok;
	json_object *top;
	size_t end;
	int ret;

	memset(r, 0, sizeof(*r));
	if (len > SCS_BODY_MAX || strnlen(body, len) != len) {
		snprintf(err, errlen, len > SCS_BODY_MAX ? "a reply of more than %lu bytes" :
			 "a NUL byte in the reply", SCS_BODY_MAX);
		return -EBADMSG;
	}
	tok = json_tokener_new_ex(SCS_JSON_DEPTH);
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	top = json_tokener_parse_ex(tok, body, (int)len);
	end = json_tokener_get_parse_end(tok);
	while (top && end < len && isspace((unsigned char)body[end]))
		end++;
	if (!top || end != len) {
		snprintf(err, errlen, "not JSON (%s at byte %zu)",
			 top ? "text after the object" :
			 json_tokener_error_desc(json_tokener_get_error(tok)), end);
		ret = -EBADMSG;
	} else if (!json_object_is_type(top, json_type_object)) {
		snprintf(err, errlen, "not a JSON object");
		ret = -EBADMSG;
	} else {
		ret = decisions(r, top, "new", now, cfg, err, errlen);
		if (!ret)
			ret = decisions(r, top, "deleted", now, cfg, err, errlen);
	}
	json_object_put(top);
	json_tokener_free(tok);
	return ret;
}

void scs_reply_free(struct scs_reply *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_origins; i++) {
		sxdp_keys_free(&r->origins[i].block);
		sxdp_keys_free(&r->origins[i].unblock);
		free(r->origins[i].expires);
	}
	r->nr_origins = 0;
}
