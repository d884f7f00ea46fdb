// SPDX-License-Identifier: GPL-2.0
/*
 * Blocklist files in the formats feeds come in. One table of formats, each
 * a sniff (does this line of a file's head show the format?) and a line
 * parser that finds the entry text on a line; the entry itself is always
 * read by sxdp_parse_entry(), so every format accepts exactly the entries
 * `sieve xdp block` does.
 *
 *   plain   one entry a line, '#' starts a comment (the list's own format)
 *   netset  FireHOL .netset/.ipset: as plain, addresses and prefixes only
 *   drop    Spamhaus DROP/EDROP/DROPv6: "1.10.16.0/20 ; SBL256894", ';' (and '#') comments
 *   ipset   `ipset save`: the adds of hash:ip and hash:net sets
 *
 * Every file is all or nothing: a bad line refuses the file, the caller's
 * list left as it was. The read goes on to report every bad line, one
 * "FILE:LINE: TEXT: reason" a line (the first FEED_BAD_MAX, then how many
 * more): a feed with a few is fixed in one pass, not one per run. An entry on
 * a last line without its line end is such a line: a download cut short
 * ends mid-line, and a cut entry may still parse (10.0.0.0/24 cut to
 * 10.0.0.0/2), so it is refused, not taken.
 */
#define _GNU_SOURCE		/* strcasestr */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xdp.h"

/* Longer than any entry; an ipset add with a comment may take some room. */
#define FEED_LINE_MAX	1024
/* Lines auto keeps before deciding; a head of only comments past it is plain. */
#define FEED_HEAD_MAX	64
#define IPSET_NAME_MAX	32	/* IPSET_MAXNAMELEN, with its NUL */
/* Bad lines reported one by one; past them only counted. */
#define FEED_BAD_MAX	10
/* Of a bad line, the text quoted in its report. */
#define FEED_QUOTE_MAX	80

/* The kinds a feed of addresses may hold. */
#define ADDR_KINDS	(1U << SIEVE_XDP_SRC | 1U << SIEVE_XDP_PREFIX)

struct ipset_set {
	char name[IPSET_NAME_MAX];
	bool taken;		/* hash:ip or hash:net: its adds are entries */
};

/* One read: what the line parsers keep between lines. */
struct feed_read {
	struct ipset_set *sets;
	size_t nsets;
	size_t skipped;		/* ipset adds to sets of other types */
};

/*
 * A line parser gets a line without its line end and leaves in *entry the
 * entry text (NULL: nothing on this line), or returns -EINVAL with *why.
 */
struct feed_format {
	const char *name;
	bool (*sniff)(const char *line);	/* NULL for plain: what is left */
	int (*parse)(struct feed_read *r, char *line, char **entry, const char **why);
	unsigned int kinds;			/* entry kinds allowed, a mask */
};

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* The text before @comment, trimmed: one entry, or nothing. */
static int one_entry(char *line, const char *comment, char **entry, const char **why)
{
	char *text;

	line[strcspn(line, comment)] = '\0';
	text = trim(line);
	if (strpbrk(text, " \t"))
		return *why = "one entry per line", -EINVAL;
	*entry = *text ? text : NULL;
	return 0;
}

static int plain_parse(struct feed_read *r, char *line, char **entry, const char **why)
{
	return one_entry(line, "#", entry, why);
}

/* FireHOL's lists say so in their header ("# Maintainer : FireHOL"). */
static bool netset_sniff(const char *line)
{
	return line[0] == '#' && strcasestr(line, "firehol");
}

/* Spamhaus files start with "; Spamhaus ..." and put "; SBLnnn" after each prefix. */
static bool drop_sniff(const char *line)
{
	return line[0] != '#' && strchr(line, ';');
}

/* '#' too: mirrors of the lists put their own '#' header on top. */
static int drop_parse(struct feed_read *r, char *line, char **entry, const char **why)
{
	return one_entry(line, ";#", entry, why);
}

static bool ipset_sniff(const char *line)
{
	return !strncmp(line, "create ", 7) || !strncmp(line, "add ", 4);
}

static struct ipset_set *ipset_find(struct feed_read *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nsets; i++)
		if (!strcmp(r->sets[i].name, name))
			return &r->sets[i];
	return NULL;
}

/* The next word of *s (NULL at the end), skipping flags such as -exist. */
static char *ipset_word(char **s)
{
	char *w;

	do {
		w = strsep(s, " \t");
	} while (w && (!*w || (w[0] == '-' && w[1])));
	return w;
}

/* "create NAME TYPE [OPTIONS]": remembers whether the set's adds are entries. */
static int ipset_create(struct feed_read *r, char *rest, const char **why)
{
	char *name = ipset_word(&rest), *type = ipset_word(&rest), *opt;
	struct ipset_set *sets;

	if (!name || !type)
		return *why = "expected create NAME TYPE", -EINVAL;
	if (strlen(name) >= IPSET_NAME_MAX)
		return *why = "set name too long", -EINVAL;
	if (ipset_find(r, name))
		return *why = "set created twice", -EINVAL;
	sets = realloc(r->sets, (r->nsets + 1) * sizeof(*sets));
	if (!sets)
		return *why = "out of memory", -ENOMEM;
	r->sets = sets;
	strcpy(sets[r->nsets].name, name);
	sets[r->nsets].taken = !strcmp(type, "hash:ip") || !strcmp(type, "hash:net");
	/* With a netmask (or bitmask) the members are prefixes written as bare addresses. */
	while (sets[r->nsets].taken && (opt = ipset_word(&rest)))
		if (!strcmp(opt, "netmask") || !strcmp(opt, "bitmask"))
			return *why = "a set with netmask or bitmask is not supported", -EINVAL;
	r->nsets++;
	return 0;
}

/* "add NAME MEMBER [OPTIONS]": options (timeout, comment) do not matter here. */
static int ipset_add(struct feed_read *r, char *rest, char **entry, const char **why)
{
	char *name = ipset_word(&rest), *member = ipset_word(&rest), *opt;
	struct ipset_set *set;

	if (!name || !member)
		return *why = "expected add NAME MEMBER", -EINVAL;
	set = ipset_find(r, name);
	if (!set)
		return *why = "add to a set that was never created", -EINVAL;
	if (!set->taken) {
		r->skipped++;
		return 0;
	}
	/*
	 * nomatch makes a hole in a bigger prefix: blocking it would do the
	 * opposite. ipset save writes it before the comment, whose quoted
	 * words are the set owner's own.
	 */
	while ((opt = ipset_word(&rest)) && opt[0] != '"')
		if (!strcmp(opt, "nomatch"))
			return *why = "nomatch (an exception) cannot be expressed", -EINVAL;
	*entry = member;
	return 0;
}

static int ipset_parse(struct feed_read *r, char *line, char **entry, const char **why)
{
	char *rest = trim(line), *cmd;

	if (!*rest || *rest == '#')
		return 0;
	cmd = ipset_word(&rest);
	if (!strcmp(cmd, "create"))
		return ipset_create(r, rest, why);
	if (!strcmp(cmd, "add"))
		return ipset_add(r, rest, entry, why);
	return *why = "not a create or add line", -EINVAL;
}

/* Indexed by enum sxdp_format; auto tries them from the last. */
static const struct feed_format formats[] = {
	[SXDP_FORMAT_PLAIN] = { "plain", NULL, plain_parse, ~0U },
	[SXDP_FORMAT_NETSET] = { "netset", netset_sniff, plain_parse, ADDR_KINDS },
	[SXDP_FORMAT_DROP] = { "drop", drop_sniff, drop_parse, ADDR_KINDS },
	[SXDP_FORMAT_IPSET] = { "ipset", ipset_sniff, ipset_parse, ADDR_KINDS },
};

int sxdp_format_parse(const char *name, enum sxdp_format *fmt)
{
	unsigned int i;

	if (!strcmp(name, "auto")) {
		*fmt = SXDP_FORMAT_AUTO;
		return 0;
	}
	for (i = SXDP_FORMAT_PLAIN; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!strcmp(name, formats[i].name)) {
			*fmt = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sxdp_format_name(enum sxdp_format fmt)
{
	return fmt == SXDP_FORMAT_AUTO ? "auto" : formats[fmt].name;
}

/*
 * What a line of a file's head says: a format whose sniff claims it (the
 * table from its end: an ipset line may hold a ';' in a comment), else
 * plain for the first line that is not blank or a comment ('#' or ';'),
 * else AUTO (undecided: look at the next line).
 */
static enum sxdp_format sniff_line(const char *line)
{
	unsigned int i;

	while (isspace((unsigned char)*line))
		line++;
	for (i = sizeof(formats) / sizeof(formats[0]) - 1; i > SXDP_FORMAT_PLAIN; i--)
		if (formats[i].sniff(line))
			return i;
	return *line && *line != '#' ? SXDP_FORMAT_PLAIN : SXDP_FORMAT_AUTO;
}

/* One file being read; err gets the errors, one a line ('\n' between). */
struct feed_file {
	const char *path;
	FILE *f;
	unsigned int lineno;
	unsigned int cut_line;	/* the last line, when it has no line end */
	unsigned int nbad;	/* bad lines so far */
	char *err;
	size_t errlen;
};

/* Bad line @lineno: "FILE:LINE: " and @fmt appended to err (the first FEED_BAD_MAX). */
static int __attribute__((format(printf, 3, 4)))
bad_line(struct feed_file *ff, unsigned int lineno, const char *fmt, ...)
{
	size_t used = strlen(ff->err);
	va_list ap;
	int n;

	if (ff->nbad++ >= FEED_BAD_MAX || used + 1 >= ff->errlen)
		return -EINVAL;
	n = snprintf(ff->err + used, ff->errlen - used, "%s%s:%u: ", used ? "\n" : "",
		     ff->path, lineno);
	if (n < 0 || (size_t)n >= ff->errlen - used)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(ff->err + used + n, ff->errlen - used - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The next line without its line end ("\n" or "\r\n"): 1, 0 at the end, or -errno. */
static int read_line(struct feed_file *ff, char *buf)
{
	size_t len;

	if (!fgets(buf, FEED_LINE_MAX, ff->f)) {
		if (!ferror(ff->f))
			return 0;
		snprintf(ff->err, ff->errlen, "%s: read error", ff->path);
		return -EIO;
	}
	ff->lineno++;
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if (!feof(ff->f))
		/* -EFBIG: the read stops (feed_lines() makes it -EINVAL). */
		return bad_line(ff, ff->lineno, "line too long"), -EFBIG;
	else
		ff->cut_line = ff->lineno;
	if (len && buf[len - 1] == '\r')
		buf[--len] = '\0';
	return 1;
}

/* Line @lineno in format @fmt: its entry, if it has one, goes on @l. */
static int feed_line(struct feed_file *ff, const struct feed_format *fmt, struct feed_read *r,
		     char *line, unsigned int lineno, struct sxdp_keys *l)
{
	char *entry = NULL, *text = trim(line), quote[FEED_QUOTE_MAX + 4];
	struct sieve_xdp_key key;
	const char *why;
	size_t len = strlen(text);
	int ret;

	/*
	 * The line as it was, for its report: the parser cuts comments off.
	 * Kept as bytes and written out only for a bad line (a printf a line
	 * was a twentieth of reading 10^7 lines).
	 */
	memcpy(quote, text, len < FEED_QUOTE_MAX ? len : FEED_QUOTE_MAX);
	ret = fmt->parse(r, line, &entry, &why);
	if (ret == -EINVAL)
		return bad_line(ff, lineno, "%.*s%s: %s", (int)(len < FEED_QUOTE_MAX ? len :
				FEED_QUOTE_MAX), quote, len > FEED_QUOTE_MAX ? "..." : "", why);
	if (ret)
		return snprintf(ff->err, ff->errlen, "%s:%u: %s", ff->path, lineno, why), ret;
	if (!entry)
		return 0;
	if (lineno == ff->cut_line)
		return bad_line(ff, lineno, "%s: the last line has no line end (a file cut short?)",
				entry);
	if (sxdp_parse_entry(entry, &key, &why))
		return bad_line(ff, lineno, "%s: %s", entry, why);
	if (!(fmt->kinds & 1U << key.kind))
		return bad_line(ff, lineno, "%s: a %s file holds addresses and prefixes only", entry,
				fmt->name);
	return sxdp_keys_add(l, &key);
}

/*
 * Every line of the file onto @l. With auto, the head (the lines up to
 * the one that decides) is kept, then read in the format it showed.
 */
static int feed_lines(struct feed_file *ff, enum sxdp_format *fmt, struct feed_read *r,
		      struct sxdp_keys *l)
{
	char (*head)[FEED_LINE_MAX] = NULL, line[FEED_LINE_MAX];
	unsigned int i, nhead = 0;
	int ret = 1;

	if (*fmt == SXDP_FORMAT_AUTO) {
		head = malloc(FEED_HEAD_MAX * sizeof(*head));
		if (!head)
			return snprintf(ff->err, ff->errlen, "%s: out of memory", ff->path), -ENOMEM;
		while (*fmt == SXDP_FORMAT_AUTO && nhead < FEED_HEAD_MAX &&
		       (ret = read_line(ff, head[nhead])) > 0)
			*fmt = sniff_line(head[nhead++]);
		if (*fmt == SXDP_FORMAT_AUTO)
			*fmt = SXDP_FORMAT_PLAIN;	/* only comments, or nothing */
	}
	/* A bad line (-EINVAL from feed_line) is counted and the read goes on. */
	for (i = 0; (ret >= 0 || ret == -EINVAL) && i < nhead; i++)
		ret = feed_line(ff, &formats[*fmt], r, head[i], i + 1, l);
	free(head);
	while ((ret >= 0 || ret == -EINVAL) && (ret = read_line(ff, line)) > 0)
		ret = feed_line(ff, &formats[*fmt], r, line, ff->lineno, l);
	if ((ret >= 0 && ff->nbad) || ret == -EFBIG)
		ret = -EINVAL;
	if (ff->nbad > FEED_BAD_MAX) {
		size_t used = strlen(ff->err);

		snprintf(ff->err + used, ff->errlen - used, "\n%s: ... and %u more bad lines",
			 ff->path, ff->nbad - FEED_BAD_MAX);
	}
	return ret;
}

int sxdp_feed_read_stream(FILE *f, const char *name, enum sxdp_format fmt,
			  struct sxdp_keys *l, struct sxdp_feed_info *info, char *err,
			  size_t errlen)
{
	struct feed_file ff = { .f = f, .path = name, .err = err, .errlen = errlen };
	struct sxdp_keys tmp = { 0 };
	struct feed_read r = { 0 };
	int ret;

	if (errlen)
		err[0] = '\0';
	ret = feed_lines(&ff, &fmt, &r, &tmp);
	free(r.sets);
	if (ret < 0) {
		sxdp_keys_free(&tmp);
		return ret;
	}
	sxdp_keys_free(l);
	*l = tmp;
	sxdp_keys_sort(l);
	if (info)
		*info = (struct sxdp_feed_info){ .format = fmt, .skipped = r.skipped };
	return 0;
}

int sxdp_feed_read(const char *path, enum sxdp_format fmt, struct sxdp_keys *l,
		   struct sxdp_feed_info *info, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	ret = sxdp_feed_read_stream(f, path, fmt, l, info, err, errlen);
	if (f != stdin)
		fclose(f);
	return ret;
}

int sxdp_keys_read(const char *path, struct sxdp_keys *l, char *err, size_t errlen)
{
	return sxdp_feed_read(path, SXDP_FORMAT_PLAIN, l, NULL, err, errlen);
}

const char *sxdp_feed_origin(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!strcmp(path, "-"))
		return NULL;
	/* "dir/": no base name, and no file to read either; the path then. */
	return slash && slash[1] ? slash + 1 : path;
}
