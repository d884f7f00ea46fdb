// SPDX-License-Identifier: GPL-2.0
/* The JSON writer behind -j and -p (see json.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "json.h"

/* The CLI's documents are 3 deep at most; past this, containers are not closed. */
#define JSON_MAX_DEPTH	16

static struct {
	bool pretty;
	int depth;
	bool has_members[JSON_MAX_DEPTH];
	char closer[JSON_MAX_DEPTH];
} w;

void json_set_pretty(bool pretty)
{
	w.pretty = pretty;
}

static void indent(int depth)
{
	putchar('\n');
	while (depth-- > 0)
		fputs("  ", stdout);
}

/* Strings come from outside (entries, origins, names): escaped, invalid UTF-8 replaced. */
static void quoted(const char *s, size_t len)
{
	putchar('"');
	sieve_escape(stdout, s, len, SIEVE_ESC_JSON);
	putchar('"');
}

/* What comes before a value: the separator, the indentation, the key. */
static void member(const char *key)
{
	if (w.depth > 0 && w.depth <= JSON_MAX_DEPTH) {
		if (w.has_members[w.depth - 1])
			fputs(w.pretty ? "," : ", ", stdout);
		w.has_members[w.depth - 1] = true;
		if (w.pretty)
			indent(w.depth);
	}
	if (key) {
		quoted(key, strlen(key));
		fputs(": ", stdout);
	}
}

static void open_container(const char *key, char open, char close)
{
	member(key);
	putchar(open);
	if (w.depth < JSON_MAX_DEPTH) {
		w.has_members[w.depth] = false;
		w.closer[w.depth] = close;
	}
	w.depth++;
}

void json_object(const char *key)
{
	open_container(key, '{', '}');
}

void json_array(const char *key)
{
	open_container(key, '[', ']');
}

void json_end(void)
{
	if (w.depth <= 0)
		return;
	w.depth--;
	if (w.depth < JSON_MAX_DEPTH) {
		if (w.pretty && w.has_members[w.depth])
			indent(w.depth);
		putchar(w.closer[w.depth]);
	}
	if (!w.depth)
		putchar('\n');
}

void json_end_all(void)
{
	while (w.depth > 0)
		json_end();
}

void json_strn(const char *key, const char *s, size_t len)
{
	member(key);
	quoted(s, len);
}

void json_str(const char *key, const char *s)
{
	json_strn(key, s, strlen(s));
}

void json_u64(const char *key, uint64_t v)
{
	member(key);
	printf("%llu", (unsigned long long)v);
}

void json_bool(const char *key, bool v)
{
	member(key);
	fputs(v ? "true" : "false", stdout);
}

void json_double(const char *key, const char *fmt, double v)
{
	member(key);
	/* JSON has no infinity or NaN. */
	if (isfinite(v))
		printf(fmt, v);
	else
		fputs("null", stdout);
}
