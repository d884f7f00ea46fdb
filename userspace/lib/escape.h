/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsieve's internal text escaper (not installed): one rule for every
 * sink that shows text from outside (Redis members, stream records, feed
 * lines, error strings, interface names, origins), so that nothing read
 * can forge a log line, a metric or a JSON member.
 *
 * The rule: the text is read as UTF-8. A valid character that the sink can
 * show as it is goes out unchanged; a character the sink gives a meaning
 * (a quote, a backslash, a line break, a control character) goes out in the
 * sink's escape; a byte that is not part of valid UTF-8 (a stray
 * continuation byte, a truncated or overlong sequence, a surrogate, past
 * U+10FFFF) goes out as the sink's replacement. What each sink does:
 *
 *   SIEVE_ESC_LOG   a log line (stderr, the journal): backslash as \\, C0
 *                   and C1 controls and DEL, and every invalid byte, as
 *                   \xNN (so a member "x\n<0>..." stays on its own line at
 *                   its own priority, and ESC never reaches a terminal).
 *   SIEVE_ESC_PROM  a Prometheus label value (exposition format 0.0.4):
 *                   backslash, double quote and newline as \\, \" and \n;
 *                   an invalid byte as U+FFFD (Prometheus refuses a whole
 *                   scrape with invalid UTF-8 in it).
 *   SIEVE_ESC_JSON  a JSON string's contents (RFC 8259): " and \ escaped,
 *                   C0 controls and DEL as \u00NN, an invalid byte as
 *                   \ufffd (a JSON text must be valid UTF-8).
 */
#ifndef SIEVE_LIB_ESCAPE_H
#define SIEVE_LIB_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sieve_esc { SIEVE_ESC_LOG, SIEVE_ESC_PROM, SIEVE_ESC_JSON };

/*
 * The length (1 to 4) of the valid UTF-8 character at @s (of @n bytes),
 * its code point in *@cp; 0 if @s does not start one.
 */
size_t sieve_utf8_char(const char *s, size_t n, uint32_t *cp);
/* @len bytes of @s to @f, escaped for @sink. */
void sieve_escape(FILE *f, const char *s, size_t len, enum sieve_esc sink);
/*
 * The same into @buf (always terminated; cut at a character's boundary
 * when it does not fit): the length written.
 */
size_t sieve_escape_buf(char *buf, size_t size, const char *s, size_t len, enum sieve_esc sink);

#endif /* SIEVE_LIB_ESCAPE_H */
