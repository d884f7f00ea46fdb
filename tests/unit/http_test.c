// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP client of userspace/sources/http.c on file:// URLs, so that
 * its bounds, conditions and errors are checked without a server (the
 * feeds' e2e case runs it against one): a body read whole, a body past
 * max_body refused, a file not modified since reported unchanged with no
 * body, a missing file and a scheme other than http, https, file refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "http.h"

/* A file of @len bytes 'a' in a fresh folder; its path in @path. */
static int http_test_file(char *dir, char *path, size_t pathlen, size_t len)
{
	FILE *f;

	if (!mkdtemp(dir))
		return -errno;
	snprintf(path, pathlen, "%s/feed.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	for (size_t i = 0; i < len; i++)
		fputc('a', f);
	return fclose(f) ? -errno : 0;
}

static int http_test_get(const char *url, size_t max, int64_t since,
			 struct ssrc_http_response *resp)
{
	struct ssrc_http_request req = {
		.url = url, .max_body = max, .modified_since = since,
		.timeout_ms = 5000,
	};

	return ssrc_http_get(&req, resp);
}

static void sieve_unit_http_file(struct sieve_test *t)
{
	char dir[] = "/tmp/sieve-http-XXXXXX", path[64], url[96];
	struct ssrc_http_response resp;
	struct stat st;
	int rc;

	rc = http_test_file(dir, path, sizeof(path), 1000);
	CHECKF(t, !rc && !stat(path, &st), "test file: %s", strerror(-rc));
	if (rc)
		return;
	snprintf(url, sizeof(url), "file://%s", path);

	/* A file within the bound is read whole, its mtime the validator. */
	rc = http_test_get(url, 1000, 0, &resp);
	CHECKF(t, rc == SSRC_HTTP_FETCHED && resp.body && resp.body_len == 1000 &&
		  strlen(resp.body) == 1000 && resp.modified == st.st_mtime,
	       "read: rc %d len %zu modified %lld (mtime %lld): %s", rc, resp.body_len,
	       (long long)resp.modified, (long long)st.st_mtime, resp.err);
	ssrc_http_response_free(&resp);

	/* One byte past the bound: refused, no body handed out. */
	rc = http_test_get(url, 999, 0, &resp);
	CHECKF(t, rc == -EFBIG && !resp.body && strstr(resp.err, "larger"),
	       "over the bound: rc %d err '%s'", rc, resp.err);
	ssrc_http_response_free(&resp);

	/* Not modified since its mtime: unchanged, no body. */
	rc = http_test_get(url, 1000, st.st_mtime, &resp);
	CHECKF(t, rc == SSRC_HTTP_UNCHANGED && !resp.body && resp.modified == st.st_mtime,
	       "not modified: rc %d body %p: %s", rc, (void *)resp.body, resp.err);
	ssrc_http_response_free(&resp);

	/* Modified after the copy the caller holds: read again. */
	rc = http_test_get(url, 1000, st.st_mtime - 10, &resp);
	CHECKF(t, rc == SSRC_HTTP_FETCHED && resp.body_len == 1000,
	       "modified since: rc %d: %s", rc, resp.err);
	ssrc_http_response_free(&resp);

	unlink(path);
	rc = http_test_get(url, 1000, 0, &resp);
	CHECKF(t, rc == -ENOENT && strstr(resp.err, path), "missing file: rc %d err '%s'", rc,
	       resp.err);
	ssrc_http_response_free(&resp);
	rmdir(dir);
}

static void sieve_unit_http_bad_requests(struct sieve_test *t)
{
	static const char *const bad_schemes[] = {
		"gopher://127.0.0.1/x", "ftp://127.0.0.1/x", "127.0.0.1/x", "/etc/hostname",
	};
	struct ssrc_http_response resp;
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(bad_schemes); i++) {
		rc = http_test_get(bad_schemes[i], 100, 0, &resp);
		CHECKF(t, rc == -EPROTONOSUPPORT && resp.err[0], "'%s': rc %d", bad_schemes[i],
		       rc);
		ssrc_http_response_free(&resp);
	}
	rc = http_test_get("file:///etc/hostname", 0, 0, &resp);
	CHECKF(t, rc == -EINVAL, "no bound on the body: rc %d", rc);
	ssrc_http_response_free(&resp);
	rc = http_test_get(NULL, 100, 0, &resp);
	CHECKF(t, rc == -EINVAL, "no URL: rc %d", rc);
	ssrc_http_response_free(&resp);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_http_cases[] = {
	CASE(sieve_unit_http_file),
	CASE(sieve_unit_http_bad_requests),
};

const unsigned int sieve_http_cases_n = ARRAY_SIZE(sieve_http_cases);
