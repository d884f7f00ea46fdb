// SPDX-License-Identifier: GPL-2.0
/*
 * The escaper of every sink that shows text from outside
 * (userspace/lib/escape.c): the log line, the Prometheus label value and
 * the JSON string, each against hostile text (a newline and a journal
 * priority, ESC, quotes, backslashes, C1 controls, every kind of invalid
 * UTF-8), and what stays as it is (valid multibyte text).
 */
#include <string.h>

#include "unit.h"
#include "escape.h"

struct esc_case {
	const char *in;
	size_t len;
	const char *log, *prom, *json;	/* NULL: not checked */
};

#define S(x)	x, sizeof(x) - 1

static const struct esc_case esc_cases[] = {
	/* A Redis member that would be its own journal line at priority emerg. */
	{ S("x\n<0>emerg"), "x\\x0a<0>emerg", "x\\n<0>emerg", "x\\u000a<0>emerg" },
	/* A terminal's escape sequence, a carriage return, a tab. */
	{ S("\x1b[2J\r\t"), "\\x1b[2J\\x0d\\x09", "\x1b[2J\r\t", "\\u001b[2J\\u000d\\u0009" },
	/* Quotes and backslashes. */
	{ S("a\"b\\c"), "a\"b\\\\c", "a\\\"b\\\\c", "a\\\"b\\\\c" },
	/* Valid UTF-8 of 2, 3 and 4 bytes stays. */
	{ S("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
	/* A C1 control (CSI, U+009B) is valid UTF-8, but not for a terminal. */
	{ S("\xc2\x9b" "2J"), "\\xc2\\x9b2J", "\xc2\x9b" "2J", "\xc2\x9b" "2J" },
	/* A stray continuation byte, a lone lead byte, a byte never in UTF-8. */
	{ S("a\x80" "b\xc3" "c\xff"), "a\\x80b\\xc3c\\xff",
	  "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd", "a\\ufffdb\\ufffdc\\ufffd" },
	/* Overlong '/', a surrogate, past U+10FFFF: each byte invalid. */
	{ S("\xc0\xaf"), "\\xc0\\xaf", "\xef\xbf\xbd\xef\xbf\xbd", "\\ufffd\\ufffd" },
	{ S("\xed\xa0\x80"), "\\xed\\xa0\\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
	  "\\ufffd\\ufffd\\ufffd" },
	{ S("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80",
	  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	/* A sequence cut by the end of the text. */
	{ S("ok\xe2\x82"), "ok\\xe2\\x82", "ok\xef\xbf\xbd\xef\xbf\xbd", "ok\\ufffd\\ufffd" },
	/* A NUL inside (a Redis member may hold one) and DEL; labels are C strings. */
	{ S("a\0b\x7f"), "a\\x00b\\x7f", NULL, "a\\u0000b\\u007f" },
};

static void check_sink(struct sieve_test *t, const struct esc_case *c, enum sieve_esc sink,
		       const char *want)
{
	char *out = NULL, buf[256];
	size_t outlen = 0, n;
	FILE *f;

	if (!want)
		return;
	f = open_memstream(&out, &outlen);
	if (!f) {
		CHECKF(t, 0, "open_memstream");
		return;
	}
	sieve_escape(f, c->in, c->len, sink);
	fclose(f);
	n = strlen(want);
	CHECKF(t, outlen == n && !memcmp(out, want, n), "case %zu sink %d: got %zu bytes",
	       (size_t)(c - esc_cases), sink, outlen);
	sieve_escape_buf(buf, sizeof(buf), c->in, c->len, sink);
	CHECKF(t, !strcmp(buf, want), "case %zu sink %d: the buffer differs",
	       (size_t)(c - esc_cases), sink);
	free(out);
}

/* Each case in each sink, through the FILE and the buffer. */
static void sieve_unit_escape_sinks(struct sieve_test *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(esc_cases); i++) {
		check_sink(t, &esc_cases[i], SIEVE_ESC_LOG, esc_cases[i].log);
		check_sink(t, &esc_cases[i], SIEVE_ESC_PROM, esc_cases[i].prom);
		check_sink(t, &esc_cases[i], SIEVE_ESC_JSON, esc_cases[i].json);
	}
}

/* What comes out of any input is one line of valid UTF-8 (log and JSON: ASCII controls none). */
static void sieve_unit_escape_every_byte(struct sieve_test *t)
{
	char in[512], out[4096];
	uint32_t cp;
	size_t i, n, len;
	int sink;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 37 + (i >> 8));
	for (sink = SIEVE_ESC_LOG; sink <= SIEVE_ESC_JSON; sink++) {
		len = sieve_escape_buf(out, sizeof(out), in, sizeof(in), sink);
		CHECKF(t, len < sizeof(out) - 1, "sink %d: the output was cut", sink);
		for (i = 0; i < len; i += n) {
			n = sieve_utf8_char(out + i, len - i, &cp);
			CHECKF(t, n, "sink %d: invalid UTF-8 at %zu", sink, i);
			if (!n)
				break;
			CHECKF(t, cp != '\n' && (sink == SIEVE_ESC_PROM || (cp >= 0x20 && cp != 0x7f)),
			       "sink %d: control %#x at %zu", sink, cp, i);
		}
	}
}

/* A buffer too small cuts at an escape's boundary, never inside one. */
static void sieve_unit_escape_buffer_cut(struct sieve_test *t)
{
	char buf[8];
	size_t n;

	n = sieve_escape_buf(buf, sizeof(buf), S("ab\n\n\n"), SIEVE_ESC_LOG);
	CHECKF(t, n == 6 && !strcmp(buf, "ab\\x0a"), "got %zu '%s'", n, buf);
	n = sieve_escape_buf(buf, 1, S("abc"), SIEVE_ESC_LOG);
	CHECKF(t, n == 0 && !buf[0], "got %zu", n);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_escape_cases[] = {
	CASE(sieve_unit_escape_sinks),
	CASE(sieve_unit_escape_every_byte),
	CASE(sieve_unit_escape_buffer_cut),
};

const unsigned int sieve_escape_cases_n = ARRAY_SIZE(sieve_escape_cases);
