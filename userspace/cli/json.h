/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON on stdout for every command's -j (one line) and -p (indented): one
 * writer, so the two forms cannot drift and no command formats JSON by
 * hand. Values take the member's key inside an object, NULL in an array.
 * A document ends with a newline when its outermost container closes.
 */
#ifndef SIEVE_CLI_JSON_H
#define SIEVE_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void json_set_pretty(bool pretty);

void json_object(const char *key);
void json_array(const char *key);
void json_end(void);
/* Closes whatever is open: a document cut short by an error stays valid. */
void json_end_all(void);

void json_str(const char *key, const char *s);
void json_strn(const char *key, const char *s, size_t len);
void json_u64(const char *key, uint64_t v);
void json_bool(const char *key, bool v);
/* A number printed with @fmt ("%.9g"): rates and ratios. */
void json_double(const char *key, const char *fmt, double v);

#endif /* SIEVE_CLI_JSON_H */
