/* SPDX-License-Identifier: GPL-2.0 */
/*
 * userspace/sources: where list changes come from, above the loader that
 * applies them (userspace/xdp/) and below the agent that schedules them.
 * http.c is the one HTTP client of them all: a GET through libcurl with
 * everything a source fetched from elsewhere must bound, so that a hostile
 * or broken server costs a bounded time and memory and an error string,
 * never a hung agent or a half-applied list.
 *
 * One call, one transfer, no state kept between calls: the caller keeps
 * the validators (ETag, modification time) a response gave and passes them
 * back in the next request, and a response that says nothing changed is
 * reported as SSRC_HTTP_UNCHANGED with no body, so that the caller does
 * no work for it.
 */
#ifndef SIEVE_SOURCES_HTTP_H
#define SIEVE_SOURCES_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Room for the validators a response carries out (ETag: RFC 9110 §8.8.3). */
#define SSRC_HTTP_ETAG_MAX	256
#define SSRC_HTTP_CTYPE_MAX	128
#define SSRC_HTTP_ERR_MAX	256

struct ssrc_http_request {
	/* http://, https:// or file://; any other scheme is -EPROTONOSUPPORT. */
	const char *url;
	/*
	 * Extra request headers, "Name: value" each (X-Api-Key for a CrowdSec
	 * Local API), ending in NULL; NULL for none. With any, no redirect is
	 * followed (libcurl would send them on to the Location's host): a
	 * 3xx fails with -EPROTO.
	 */
	const char *const *headers;
	/* The body's bound in bytes (after any decompression): past it the
	 * transfer is aborted and the call fails with -EFBIG. Must be > 0. */
	size_t max_body;
	/* Bounds on connecting and on the whole transfer, in milliseconds;
	 * 0 takes the defaults below. Past either, -ETIMEDOUT. */
	long connect_timeout_ms;
	long timeout_ms;
	/*
	 * Validators of the copy the caller holds, from an earlier response;
	 * NULL or "" and 0 for none. An ETag is sent as If-None-Match (HTTP
	 * only), a modification time (Unix seconds) as If-Modified-Since, or
	 * compared with a file:// URL's mtime.
	 */
	const char *etag;
	int64_t modified_since;
	/*
	 * NULL, or a flag another thread sets to abort the transfer (a stop
	 * that must not wait out a slow server): polled about every second
	 * and between reads; the call then fails with -ECANCELED.
	 */
	const atomic_bool *cancel;
};

#define SSRC_HTTP_CONNECT_TIMEOUT_MS	5000L
#define SSRC_HTTP_TIMEOUT_MS		30000L

struct ssrc_http_response {
	/* The HTTP status; 0 for file:// or when no response came. */
	long status;
	/*
	 * The body, malloc'ed and NUL-terminated (a NUL inside it is the
	 * caller's to reject), NULL when unchanged or when none came. It is
	 * kept for a status that is not 2xx too (an error document, such as
	 * a Local API's {"message": ...}), bounded the same.
	 */
	char *body;
	size_t body_len;
	/* The new validators: the ETag ("" none), the Last-Modified time or
	 * the file's mtime (0 none). Unchanged responses keep the request's. */
	char etag[SSRC_HTTP_ETAG_MAX];
	int64_t modified;
	/* Content-Type, "" none: "text/html" is how an error page
	 * served as 200 gives itself away. */
	char content_type[SSRC_HTTP_CTYPE_MAX];
	/* What went wrong, one line naming the URL, when the call fails. */
	char err[SSRC_HTTP_ERR_MAX];
};

/* What ssrc_http_get() returns when it did not fail. */
enum ssrc_http_result {
	SSRC_HTTP_FETCHED = 0,	/* a 2xx (or a file read): body holds it */
	SSRC_HTTP_UNCHANGED = 1,	/* 304, or a file not modified since */
};

/*
 * Initialises libcurl, once per process (thread-safe; later calls return
 * the first result). Call it before any thread that fetches starts;
 * ssrc_http_get() calls it too. 0 or -ENOMEM.
 */
int ssrc_http_init(void);

/*
 * One GET of @req into @resp (zeroed first; free it with
 * ssrc_http_response_free() whatever the result). Redirects among
 * http(s) URLs are followed (at most 5; never to file://; none for a
 * request with headers). Returns an
 * enum ssrc_http_result, or a negative errno with resp->err set:
 *	-EINVAL		no URL, or max_body 0
 *	-EPROTONOSUPPORT a scheme other than http, https, file
 *	-ETIMEDOUT	connect_timeout_ms or timeout_ms passed
 *	-EFBIG		the body passed max_body
 *	-EPROTO		an HTTP status other than 2xx and 304 (body kept)
 *	-ENOENT		a file:// URL naming no readable file
 *	-ECONNREFUSED	the server refused the connection
 *	-ECANCELED	req->cancel was set
 *	-EIO		any other failure, a truncated body included (fewer
 *			bytes than Content-Length, a broken chunked encoding)
 *	-ENOMEM
 */
int ssrc_http_get(const struct ssrc_http_request *req, struct ssrc_http_response *resp);

void ssrc_http_response_free(struct ssrc_http_response *resp);

#endif /* SIEVE_SOURCES_HTTP_H */
