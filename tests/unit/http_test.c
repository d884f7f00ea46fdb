// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP client of userspace/sources/http.c on file:// URLs, so that
 * its bounds, conditions and errors are checked without a server (the
 * feeds' e2e case runs it against one): a body read whole, a body past
 * max_body refused, a file not modified since reported unchanged with no
 * body, a missing file and a scheme other than http, https, file refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/*
 * A loopback server of two ports for the redirect case: the first answers
 * every request with a 302 to the second, the second records whether a
 * request carried the secret header. Each accept waits at most 3 s.
 */
struct redirect_server {
	int first, second;
	unsigned short second_port;
	bool second_got_key;
};

static int listen_loopback(unsigned short *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* One request read (its headers, bounded) on a connection to @fd, or -1. */
static int serve_one(int fd, char *req, size_t reqlen)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;
	int c;

	if (poll(&p, 1, 3000) != 1)
		return -1;
	c = accept(fd, NULL, NULL);
	if (c < 0)
		return -1;
	p.fd = c;
	while (got + 1 < reqlen && !strstr(req, "\r\n\r\n") && poll(&p, 1, 3000) == 1 &&
	       (n = read(c, req + got, reqlen - 1 - got)) > 0) {
		got += n;
		req[got] = '\0';
	}
	return c;
}

static void *redirect_serve(void *opaque)
{
	struct redirect_server *s = opaque;
	char req[4096] = "", reply[256];
	int c = serve_one(s->first, req, sizeof(req));

	if (c < 0)
		return NULL;
	snprintf(reply, sizeof(reply), "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:%u/x\r\n"
		 "Content-Length: 0\r\nConnection: close\r\n\r\n", s->second_port);
	if (write(c, reply, strlen(reply)) < 0)
		c = -c;
	close(c < 0 ? -c : c);
	memset(req, 0, sizeof(req));
	c = serve_one(s->second, req, sizeof(req));
	if (c < 0)
		return NULL;
	s->second_got_key = strcasestr(req, "X-Api-Key") != NULL;
	snprintf(reply, sizeof(reply), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		 "Connection: close\r\n\r\nok");
	if (write(c, reply, strlen(reply)) < 0)
		c = -c;
	close(c < 0 ? -c : c);
	return NULL;
}

/*
 * A request carrying headers (a Local API's X-Api-Key) follows no
 * redirect: libcurl sends custom headers other than Authorization and
 * Cookie to whatever host a Location names, so a redirect (a hostile or
 * hijacked server, a downgrade to http://) would hand the key over.
 */
static void sieve_unit_http_no_redirect_with_headers(struct sieve_test *t)
{
	static const char *const headers[] = { "X-Api-Key: secret", NULL };
	struct redirect_server s = { .first = -1, .second = -1 };
	struct ssrc_http_response resp;
	struct ssrc_http_request req = {
		.headers = headers, .max_body = 100, .timeout_ms = 5000,
	};
	unsigned short first_port = 0;
	char url[64];
	pthread_t th;
	int rc;

	s.first = listen_loopback(&first_port);
	s.second = listen_loopback(&s.second_port);
	CHECKF(t, s.first >= 0 && s.second >= 0, "loopback listen: %s", strerror(errno));
	if (s.first < 0 || s.second < 0 || pthread_create(&th, NULL, redirect_serve, &s))
		goto out;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/decisions/stream", first_port);
	req.url = url;
	rc = ssrc_http_get(&req, &resp);
	/* The second server stops waiting after its poll's 3 s if never called. */
	pthread_join(th, NULL);
	CHECKF(t, !s.second_got_key, "the key followed a redirect to another port");
	CHECKF(t, rc == -EPROTO && strstr(resp.err, "302"), "a redirect: rc %d err '%s'", rc,
	       resp.err);
	ssrc_http_response_free(&resp);
out:
	if (s.first >= 0)
		close(s.first);
	if (s.second >= 0)
		close(s.second);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_http_cases[] = {
	CASE(sieve_unit_http_file),
	CASE(sieve_unit_http_bad_requests),
	CASE(sieve_unit_http_no_redirect_with_headers),
};

const unsigned int sieve_http_cases_n = ARRAY_SIZE(sieve_http_cases);
