// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded GET through libcurl (http.h): the body capped while it is
 * written, not after; connect and total timeouts; conditional requests;
 * curl's errors turned into errnos and one line of text.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "http.h"

/* A feed moved to another host is common; a loop of redirects is not. */
#define SSRC_HTTP_MAX_REDIRECTS	5L

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static int http_init_err;

static void http_init_once(void)
{
	http_init_err = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
}

int ssrc_http_init(void)
{
	pthread_once(&http_once, http_init_once);
	return http_init_err;
}

/* The body as it arrives: grown by doubling, never past max + 1 bytes. */
struct http_body {
	char *buf;
	size_t len, cap, max;
	bool too_big;
};

static size_t http_write(char *data, size_t size, size_t nmemb, void *opaque)
{
	struct http_body *b = opaque;
	size_t n = size * nmemb;	/* curl: size is always 1 */
	size_t want, cap;
	char *buf;

	if (n > b->max - b->len) {
		b->too_big = true;
		return 0;	/* aborts the transfer: CURLE_WRITE_ERROR */
	}
	want = b->len + n + 1;
	if (want > b->cap) {
		cap = b->cap ? b->cap : 16384;
		while (cap < want)
			cap = cap > b->max / 2 ? b->max + 1 : cap * 2;
		buf = realloc(b->buf, cap);
		if (!buf)
			return 0;
		b->buf = buf;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

/* libcurl's progress callback: nonzero aborts (CURLE_ABORTED_BY_CALLBACK). */
static int http_progress(void *opaque, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			 curl_off_t ulnow)
{
	return atomic_load((const atomic_bool *)opaque);
}

static bool http_scheme_ok(const char *url)
{
	return !strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8) ||
	       !strncasecmp(url, "file://", 7);
}

static int http_errno(CURLcode rc, const struct http_body *body)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_FILESIZE_EXCEEDED:
		return -EFBIG;
	case CURLE_WRITE_ERROR:
		return body->too_big ? -EFBIG : -ENOMEM;
	case CURLE_UNSUPPORTED_PROTOCOL:
		return -EPROTONOSUPPORT;
	case CURLE_FILE_COULDNT_READ_FILE:
		return -ENOENT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	default:
		return -EIO;
	}
}

/* The request's headers: the caller's, and If-None-Match for an ETag. */
static int http_headers(const struct ssrc_http_request *req, struct curl_slist **list)
{
	char line[sizeof("If-None-Match: ") + SSRC_HTTP_ETAG_MAX];
	struct curl_slist *l = NULL, *n;

	for (const char *const *h = req->headers; h && *h; h++) {
		n = curl_slist_append(l, *h);
		if (!n)
			goto out_nomem;
		l = n;
	}
	if (req->etag && *req->etag && !strncasecmp(req->url, "http", 4)) {
		if (snprintf(line, sizeof(line), "If-None-Match: %s", req->etag) >= (int)sizeof(line))
			goto out_inval;
		n = curl_slist_append(l, line);
		if (!n)
			goto out_nomem;
		l = n;
	}
	*list = l;
	return 0;
out_inval:
	curl_slist_free_all(l);
	return -EINVAL;
out_nomem:
	curl_slist_free_all(l);
	return -ENOMEM;
}

static void http_setopts(CURL *c, const struct ssrc_http_request *req, struct curl_slist *hdrs,
			 struct http_body *body, char *errbuf)
{
	long connect_ms = req->connect_timeout_ms > 0 ? req->connect_timeout_ms :
							 SSRC_HTTP_CONNECT_TIMEOUT_MS;
	long total_ms = req->timeout_ms > 0 ? req->timeout_ms : SSRC_HTTP_TIMEOUT_MS;

	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	/*
	 * libcurl hands custom headers other than Authorization and Cookie
	 * to whatever host a Location names: a request that carries its own
	 * (a Local API's key) follows no redirect, and a 3xx is an error.
	 */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, req->headers && *req->headers ? 0L : 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, SSRC_HTTP_MAX_REDIRECTS);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);	/* threads: no SIGALRM */
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sieve");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");	/* what libcurl decodes */
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	/* Refused early when the server announces the size; the write
	 * callback bounds what it does not announce (or decompresses). */
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)body->max);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FILETIME, 1L);
	if (req->cancel) {
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)req->cancel);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	if (req->modified_since > 0) {
		curl_easy_setopt(c, CURLOPT_TIMECONDITION, (long)CURL_TIMECOND_IFMODSINCE);
		curl_easy_setopt(c, CURLOPT_TIMEVALUE_LARGE, (curl_off_t)req->modified_since);
	}
}

/* The validators and type the last response (after redirects) carried. */
static void http_response_info(CURL *c, const struct ssrc_http_request *req,
			       struct ssrc_http_response *resp)
{
	struct curl_header *h;
	curl_off_t filetime = -1;
	char *ctype = NULL;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	if (curl_easy_header(c, "ETag", 0, CURLH_HEADER, -1, &h) == CURLHE_OK)
		snprintf(resp->etag, sizeof(resp->etag), "%s", h->value);
	if (curl_easy_getinfo(c, CURLINFO_FILETIME_T, &filetime) == CURLE_OK && filetime > 0)
		resp->modified = filetime;
	if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK && ctype)
		snprintf(resp->content_type, sizeof(resp->content_type), "%s", ctype);
	/* A 304 carries the validators again, or not: keep the request's. */
	if (!resp->etag[0] && req->etag)
		snprintf(resp->etag, sizeof(resp->etag), "%s", req->etag);
	if (!resp->modified)
		resp->modified = req->modified_since;
}

/* After a transfer curl completed: fetched, unchanged, or an HTTP error. */
static int http_result(CURL *c, const struct ssrc_http_request *req,
		       struct ssrc_http_response *resp, struct http_body *body)
{
	long unmet = 0;

	curl_easy_getinfo(c, CURLINFO_CONDITION_UNMET, &unmet);
	if (resp->status == 304 || unmet)
		return SSRC_HTTP_UNCHANGED;
	resp->body = body->buf;
	resp->body_len = body->len;
	body->buf = NULL;
	if (!resp->body) {	/* an empty body is one: "" */
		resp->body = calloc(1, 1);
		if (!resp->body)
			return -ENOMEM;
	}
	if (resp->status && (resp->status < 200 || resp->status > 299)) {
		snprintf(resp->err, sizeof(resp->err), "%s: HTTP status %ld", req->url,
			 resp->status);
		return -EPROTO;
	}
	return SSRC_HTTP_FETCHED;
}

int ssrc_http_get(const struct ssrc_http_request *req, struct ssrc_http_response *resp)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct http_body body = { 0 };
	struct curl_slist *hdrs = NULL;
	CURL *c;
	CURLcode rc;
	int err;

	memset(resp, 0, sizeof(*resp));
	if (!req->url || !*req->url || !req->max_body) {
		snprintf(resp->err, sizeof(resp->err), "no URL or no bound on the body");
		return -EINVAL;
	}
	if (!http_scheme_ok(req->url)) {
		snprintf(resp->err, sizeof(resp->err), "%s: not an http, https or file URL",
			 req->url);
		return -EPROTONOSUPPORT;
	}
	err = ssrc_http_init();
	if (err)
		goto out_msg;
	err = http_headers(req, &hdrs);
	if (err)
		goto out_msg;
	c = curl_easy_init();
	if (!c) {
		err = -ENOMEM;
		goto out_free_headers;
	}
	body.max = req->max_body;
	http_setopts(c, req, hdrs, &body, errbuf);
	rc = curl_easy_perform(c);
	http_response_info(c, req, resp);
	if (rc != CURLE_OK) {
		err = http_errno(rc, &body);
		if (err == -EFBIG)
			snprintf(resp->err, sizeof(resp->err), "%s: body larger than %zu bytes",
				 req->url, req->max_body);
		else
			snprintf(resp->err, sizeof(resp->err), "%s: %s", req->url,
				 errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else {
		err = http_result(c, req, resp, &body);
	}
	curl_easy_cleanup(c);
	free(body.buf);
out_free_headers:
	curl_slist_free_all(hdrs);
out_msg:
	if (err < 0 && !resp->err[0])
		snprintf(resp->err, sizeof(resp->err), "%s: %s", req->url, strerror(-err));
	return err;
}

void ssrc_http_response_free(struct ssrc_http_response *resp)
{
	free(resp->body);
	resp->body = NULL;
	resp->body_len = 0;
}
