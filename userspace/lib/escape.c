// SPDX-License-Identifier: GPL-2.0
/* The text escaper of every sink that shows text from outside (see escape.h). */
#include <string.h>

#include "escape.h"

size_t sieve_utf8_char(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	/* The smallest code point of each length: a smaller one is overlong. */
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	uint32_t c;

	if (!n)
		return 0;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0) {
		len = 2;
		c = u[0] & 0x1f;
	} else if ((u[0] & 0xf0) == 0xe0) {
		len = 3;
		c = u[0] & 0x0f;
	} else if ((u[0] & 0xf8) == 0xf0) {
		len = 4;
		c = u[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/*
 * The escape of one character @cp (or of the invalid byte @byte, @cp
 * UINT32_MAX) for @sink into @out: its length, or 0 if it goes out as it is.
 */
static int escape_one(uint32_t cp, unsigned char byte, enum sieve_esc sink, char out[16])
{
	switch (sink) {
	case SIEVE_ESC_LOG:
		if (cp == '\\')
			return snprintf(out, 16, "\\\\");
		if (cp == UINT32_MAX)
			return snprintf(out, 16, "\\x%02x", byte);
		/* C1 controls are two bytes in UTF-8: both shown. */
		if (cp >= 0x80 && cp < 0xa0)
			return snprintf(out, 16, "\\x%02x\\x%02x", 0xc0 | cp >> 6,
					0x80 | (cp & 0x3f));
		if (cp < 0x20 || cp == 0x7f)
			return snprintf(out, 16, "\\x%02x", cp);
		return 0;
	case SIEVE_ESC_PROM:
		if (cp == '\\' || cp == '"')
			return snprintf(out, 16, "\\%c", (char)cp);
		if (cp == '\n')
			return snprintf(out, 16, "\\n");
		if (cp == UINT32_MAX)
			return snprintf(out, 16, "\xef\xbf\xbd");
		return 0;
	case SIEVE_ESC_JSON:
		if (cp == '\\' || cp == '"')
			return snprintf(out, 16, "\\%c", (char)cp);
		if (cp == UINT32_MAX)
			return snprintf(out, 16, "\\ufffd");
		if (cp < 0x20 || cp == 0x7f)
			return snprintf(out, 16, "\\u%04x", cp);
		return 0;
	}
	return 0;
}

/*
 * Walks @s: calls @emit with each piece that goes out (a run of
 * characters as they are, or one escape). Stops when @emit says so.
 */
static void escape_walk(const char *s, size_t len, enum sieve_esc sink,
			int (*emit)(void *ctx, const char *p, size_t n), void *ctx)
{
	size_t i = 0, n;
	uint32_t cp;
	char out[16];
	int e;

	while (i < len) {
		n = sieve_utf8_char(s + i, len - i, &cp);
		e = escape_one(n ? cp : UINT32_MAX, (unsigned char)s[i], sink, out);
		if (e ? emit(ctx, out, e) : emit(ctx, s + i, n))
			return;
		i += n ? n : 1;
	}
}

static int emit_file(void *ctx, const char *p, size_t n)
{
	fwrite(p, 1, n, ctx);
	return 0;
}

void sieve_escape(FILE *f, const char *s, size_t len, enum sieve_esc sink)
{
	escape_walk(s, len, sink, emit_file, f);
}

struct buf {
	char *p;
	size_t size, len;
};

static int emit_buf(void *ctx, const char *p, size_t n)
{
	struct buf *b = ctx;

	if (b->len + n >= b->size)
		return 1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

size_t sieve_escape_buf(char *buf, size_t size, const char *s, size_t len, enum sieve_esc sink)
{
	struct buf b = { buf, size, 0 };

	if (!size)
		return 0;
	escape_walk(s, len, sink, emit_buf, &b);
	buf[b.len] = '\0';
	return b.len;
}
