// SPDX-License-Identifier: GPL-2.0
/*
 * The blocklist's keyed digest (include/sieve_xdp.h) and the host secret
 * that keys it (userspace/xdp/secret.c):
 *  - sieve_xdp_siphash() as SipHash-2-4 against the paper's vectors, and
 *    sieve_xdp_digest() (SipHash-1-3) against the known 1-3 vectors (the
 *    kernel's hsiphash on 64-bit is SipHash-1-3 cut to 32 bits) and an
 *    independent byte-wise model of the paper's description, written here;
 *  - a collision solved for the old linear digest (issue 20, item 4) does
 *    not collide under the keyed one;
 *  - the secret file: made 0600 and 16 bytes, the same on every load, and
 *    a file of another mode, size or type refused and left as it is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "unit.h"
#include "store.h"

static u64 rng_state = 0x3c6ef372fe94f82bULL;

static u64 rnd(void)
{
	return sieve_test_mix64(rng_state++);
}

/* SipHash-2-4, key 00..0f, message 00 01 .. (i - 1): the paper's vectors. */
static const u64 vectors_24[64] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
	0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
	0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL, 0xa129ca6149be45e5ULL,
	0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL, 0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL,
	0xbed65cf21aa2ee98ULL, 0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
	0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL, 0x2f2e6163076bcfadULL,
	0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL, 0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL,
	0x7127512f72f27cceULL, 0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
	0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL, 0x9abfd8766a33735cULL,
	0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL, 0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL,
	0xf935451de4f21df2ULL, 0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
	0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL, 0xa192d576b245165aULL,
	0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL, 0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL,
	0xb78dbfaf3a8d83bdULL, 0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
	0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL, 0x958a324ceb064572ULL,
};

/* The same for SipHash-1-3, the low 32 bits (lib/siphash_kunit.c, 64-bit hsiphash). */
static const u32 vectors_13_low[64] = {
	0x050fc4dcU, 0x7d57ca93U, 0x4dc7d44dU, 0xe7ddf7fbU, 0x88d38328U, 0x49533b67U,
	0xc59f22a7U, 0x9bb11140U, 0x8d299a8eU, 0x6c063de4U, 0x92ff097fU, 0xf94dc352U,
	0x57b4d9a2U, 0x1229ffa7U, 0xc0f95d34U, 0x2a519956U, 0x7d908b66U, 0x63dbd80cU,
	0xb473e63eU, 0x8d297d1cU, 0xa6cce040U, 0x2b45f844U, 0xa320872eU, 0xdae6c123U,
	0x67349c8cU, 0x705b0979U, 0xca9913a5U, 0x4ade3b35U, 0xef6cd00dU, 0x4ab1e1f4U,
	0x43c5e663U, 0x8c21d1bcU, 0x16a7b60dU, 0x7a8ff9bfU, 0x1f2a753eU, 0xbf186b91U,
	0xada26206U, 0xa3c33057U, 0xae3a36a1U, 0x7b108392U, 0x99e41531U, 0x3f1ad944U,
	0xc8138825U, 0xc28949a6U, 0xfaf8876bU, 0x9f042196U, 0x68b1d623U, 0x8b5114fdU,
	0xdf074c46U, 0x12cc86b3U, 0x0a52098fU, 0x9d292f9aU, 0xa2f41f12U, 0x43a71ed0U,
	0x73f0bce6U, 0x70a7e980U, 0x243c6d75U, 0xfdb71513U, 0xa67d8a08U, 0xb7e8f148U,
	0xf7a644eeU, 0x0f1837f2U, 0x4b6694e0U, 0xb7bbb3a8U,
};

/* ---- a model of SipHash from the paper, byte by byte, any length ---- */

static u64 ref_rotl(u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void ref_round(u64 v[4])
{
	v[0] += v[1];
	v[1] = ref_rotl(v[1], 13) ^ v[0];
	v[0] = ref_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = ref_rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = ref_rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = ref_rotl(v[1], 17) ^ v[2];
	v[2] = ref_rotl(v[2], 32);
}

/* Little-endian load of @n bytes (n <= 8), as the paper reads the message. */
static u64 ref_le(const u8 *p, size_t n)
{
	u64 x = 0;

	while (n--)
		x |= (u64)p[n] << (8 * n);
	return x;
}

static u64 ref_siphash(const u8 *in, size_t len, const u8 key[16], int c, int d)
{
	u64 k0 = ref_le(key, 8), k1 = ref_le(key + 8, 8);
	u64 v[4] = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
		     k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL };
	size_t i, full = len / 8 * 8;
	u64 m;
	int r;

	for (i = 0; i <= full; i += 8) {
		/* The last block: the bytes left, and the length in the top byte. */
		m = i < full ? ref_le(in + i, 8) : ref_le(in + i, len - full) | (u64)len << 56;
		v[3] ^= m;
		for (r = 0; r < c; r++)
			ref_round(v);
		v[0] ^= m;
	}
	v[2] ^= 0xff;
	for (r = 0; r < d; r++)
		ref_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* The model against both sets of published vectors: it is SipHash. */
static void sieve_unit_digest_model_vectors(struct sieve_test *t)
{
	u8 key[16], in[64];
	unsigned int i;

	for (i = 0; i < 16; i++)
		key[i] = i;
	for (i = 0; i < 64; i++)
		in[i] = i;
	for (i = 0; i < 64; i++) {
		CHECKF(t, ref_siphash(in, i, key, 2, 4) == vectors_24[i], "model 2-4, %u bytes", i);
		CHECKF(t, (u32)ref_siphash(in, i, key, 1, 3) == vectors_13_low[i],
		       "model 1-3, %u bytes", i);
	}
}

/* The header's SipHash: the paper's 40-byte vectors, 2-4 and 1-3. */
static void sieve_unit_digest_siphash_vectors(struct sieve_test *t)
{
	const __u64 k[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	struct sieve_xdp_key key;
	__u64 m[5];
	u8 *b = (u8 *)m;
	unsigned int i;

	for (i = 0; i < sizeof(m); i++)
		b[i] = i;
	memcpy(&key, m, sizeof(key));
	/* Words read in host order: the vectors hold on little-endian hosts. */
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return;
	EXPECT_EQ(t, sieve_xdp_siphash(m, 5, k, 2, 4), vectors_24[40]);
	EXPECT_EQ(t, (u32)sieve_xdp_digest(&key, k), vectors_13_low[40]);
	EXPECT_EQ(t, sieve_xdp_digest(&key, k), 0xc1d2363299e41531ULL);
}

/* The digest is SipHash-1-3 of the key's 40 bytes, for any key and secret. */
static void sieve_unit_digest_matches_model(struct sieve_test *t)
{
	unsigned int i, j, bad = 0;

	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return;
	for (i = 0; i < 20000; i++) {
		__u64 secret[2] = { rnd(), rnd() }, w[5];
		struct sieve_xdp_key key;

		for (j = 0; j < 5; j++)
			w[j] = rnd();
		memcpy(&key, w, sizeof(key));
		bad += sieve_xdp_digest(&key, secret) !=
		       ref_siphash((const u8 *)w, sizeof(w), (const u8 *)secret, 1, 3);
	}
	EXPECT_EQ(t, bad, 0);
}

/* ---- the collision of issue 20 ---- */

/* The digest before this one: five words, each times an odd constant. */
static const u64 linear_mult[5] = {
	0x87c37b91114253d5ULL, 0x4cf5ad432745937fULL, 0x9e3779b97f4a7c15ULL,
	0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
};

static u64 linear_digest(const struct sieve_xdp_key *key)
{
	const u64 *w = (const u64 *)key;
	u64 d = 0;
	int i;

	for (i = 0; i < 5; i++)
		d += w[i] * linear_mult[i];
	return d;
}

/* The inverse of odd @a modulo 2^64 (Newton: each step doubles the good bits). */
static u64 inverse(u64 a)
{
	u64 x = a;
	int i;

	for (i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

/*
 * An entry of kind service, tcp:[2001:db8::X]:443, whose old digest is
 * the victim's: X, the last word, solved for. What anyone could publish.
 */
static struct sieve_xdp_key solve_linear(const struct sieve_xdp_key *victim)
{
	struct sieve_xdp_key a = {
		.kind = SIEVE_XDP_SERVICE, .family = SIEVE_XDP_V6, .proto = 6,
		.dport = htons(443), .daddr = { htonl(0x20010db8) },
	};
	u64 *w = (u64 *)&a;

	w[4] = 0;
	w[4] = (linear_digest(victim) - linear_digest(&a)) * inverse(linear_mult[4]);
	return a;
}

static void sieve_unit_digest_solved_collision(struct sieve_test *t)
{
	static const char *const victims[] = { "8.8.8.8", "192.0.2.1", "2001:db8::1", "10.0.0.0/8" };
	unsigned int i, j, collide = 0;

	for (i = 0; i < ARRAY_SIZE(victims); i++) {
		struct sieve_xdp_key v, a, back;
		const char *why;
		char text[128];

		EXPECT_EQ(t, sxdp_parse_entry(victims[i], &v, &why), 0);
		a = solve_linear(&v);
		/* A valid entry, as a feed would carry it. */
		sxdp_format_entry(&a, text, sizeof(text));
		CHECKF(t, !sxdp_parse_entry(text, &back, &why) && !memcmp(&a, &back, sizeof(a)),
		       "%s does not parse back", text);
		sieve_note("solved for %s: %s", victims[i], text);
		/* The attack works on the old digest ... */
		CHECKF(t, linear_digest(&a) == linear_digest(&v) && memcmp(&a, &v, sizeof(a)),
		       "no collision solved for %s", victims[i]);
		/* ... and not on the keyed one, whatever the secret. */
		for (j = 0; j < 1000; j++) {
			__u64 secret[2] = { rnd(), rnd() };

			collide += sieve_xdp_digest(&a, secret) == sieve_xdp_digest(&v, secret);
		}
	}
	EXPECT_EQ(t, collide, 0);
}

/* ---- the secret file ---- */

struct secret_dir {
	char dir[64];
	char path[128];
};

static bool secret_dir_make(struct sieve_test *t, struct secret_dir *d)
{
	strcpy(d->dir, "/tmp/sieve-secret-XXXXXX");
	if (!mkdtemp(d->dir)) {
		CHECKF(t, 0, "mkdtemp: %s", strerror(errno));
		return false;
	}
	snprintf(d->path, sizeof(d->path), "%s/%s", d->dir, SXDP_SECRET_FILE);
	return true;
}

static void secret_dir_clean(struct secret_dir *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	if (system(cmd))
		fprintf(stderr, "%s failed\n", cmd);
}

/* Made at first use: 0600, 16 bytes, no temporary left; then read, not remade. */
static void sieve_unit_digest_secret_made_once(struct sieve_test *t)
{
	struct secret_dir d, e;
	__u64 a[2], b[2], c[2];
	char err[512] = "";
	struct stat st;
	mode_t old = umask(0);	/* the file must be 0600 whatever the umask */

	if (!secret_dir_make(t, &d) || !secret_dir_make(t, &e))
		goto out;
	EXPECT_EQ(t, sxdp_secret_load(d.dir, a, err, sizeof(err)), 0);
	CHECKF(t, !stat(d.path, &st) && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 &&
	       st.st_size == 16, "%s: mode %o, %lld bytes", d.path, (unsigned int)st.st_mode,
	       (long long)st.st_size);
	EXPECT_EQ(t, sxdp_secret_load(d.dir, b, err, sizeof(err)), 0);
	EXPECT_TRUE(t, !memcmp(a, b, sizeof(a)));
	/* Another host (folder), another secret. */
	EXPECT_EQ(t, sxdp_secret_load(e.dir, c, err, sizeof(err)), 0);
	EXPECT_TRUE(t, memcmp(a, c, sizeof(a)) != 0);
	EXPECT_TRUE(t, a[0] || a[1]);
	/* Only the file: the temporary went. */
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", d.dir);
		CHECKF(t, !system(cmd), "%s holds more than the secret", d.dir);
	}
out:
	umask(old);
	secret_dir_clean(&d);
	secret_dir_clean(&e);
}

/* The store hands out the secret of its folder, the same every time it opens. */
static void sieve_unit_digest_secret_of_store(struct sieve_test *t)
{
	struct sxdp_store *s = NULL;
	const __u64 *secret;
	struct secret_dir d;
	char err[512] = "";
	__u64 first[2], file[2];

	if (!secret_dir_make(t, &d))
		return;
	if (sxdp_store_open(d.dir, &s, err, sizeof(err)) ||
	    sxdp_store_secret(s, &secret, err, sizeof(err))) {
		CHECKF(t, 0, "%s", err);
		goto out;
	}
	memcpy(first, secret, sizeof(first));
	sxdp_store_close(s);
	s = NULL;
	if (sxdp_store_open(d.dir, &s, err, sizeof(err)) ||
	    sxdp_store_secret(s, &secret, err, sizeof(err))) {
		CHECKF(t, 0, "%s", err);
		goto out;
	}
	EXPECT_TRUE(t, !memcmp(first, secret, sizeof(first)));
	EXPECT_EQ(t, sxdp_secret_load(d.dir, file, err, sizeof(err)), 0);
	EXPECT_TRUE(t, !memcmp(first, file, sizeof(first)));
out:
	sxdp_store_close(s);
	secret_dir_clean(&d);
}

/*
 * Processes making the secret at once (the CLI and the agent at first
 * boot) all end up with the same one: link() never replaces a file.
 */
static void sieve_unit_digest_secret_race(struct sieve_test *t)
{
	enum { PROCS = 8, ROUNDS = 20 };
	unsigned int r, i, differ = 0, failed = 0;
	struct secret_dir d;
	char err[512];

	for (r = 0; r < ROUNDS; r++) {
		__u64 got[PROCS][2], mine[2];
		int fds[PROCS][2], status;
		pid_t pids[PROCS];

		if (!secret_dir_make(t, &d))
			return;
		for (i = 0; i < PROCS; i++) {
			if (pipe(fds[i])) {
				CHECKF(t, 0, "pipe: %s", strerror(errno));
				break;
			}
			pids[i] = fork();
			if (!pids[i]) {
				__u64 k[2] = { 0, 0 };

				close(fds[i][0]);
				sxdp_secret_load(d.dir, k, err, sizeof(err));
				_exit(write(fds[i][1], k, sizeof(k)) == sizeof(k) ? 0 : 1);
			}
			close(fds[i][1]);
		}
		for (i = 0; i < PROCS; i++) {
			failed += read(fds[i][0], got[i], sizeof(got[i])) != sizeof(got[i]);
			close(fds[i][0]);
			waitpid(pids[i], &status, 0);
		}
		failed += sxdp_secret_load(d.dir, mine, err, sizeof(err)) != 0;
		for (i = 0; i < PROCS; i++)
			differ += memcmp(got[i], mine, sizeof(mine)) != 0;
		secret_dir_clean(&d);
	}
	EXPECT_EQ(t, failed, 0);
	EXPECT_EQ(t, differ, 0);
}

/* Writes @n bytes of 0x5a to @path with @mode. */
static bool put_file(const char *path, size_t n, mode_t mode)
{
	FILE *f = fopen(path, "w");
	bool ok = f != NULL;

	while (ok && n--)
		ok = fputc(0x5a, f) != EOF;
	if (f && fclose(f))
		ok = false;
	return ok && !chmod(path, mode);
}

/* The file's bytes, to check a refusal left them alone. */
static size_t file_bytes(const char *path, u8 *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len, f) : 0;

	if (f)
		fclose(f);
	return n;
}

/*
 * Another mode, another size, a symlink, a folder: refused with a message
 * naming the file, never used and never rewritten.
 */
static void sieve_unit_digest_secret_bad_files(struct sieve_test *t)
{
	static const struct {
		size_t size;
		mode_t mode;
		int want;
	} bad[] = {
		{ 16, 0644, -EPERM }, { 16, 0640, -EPERM }, { 16, 0400, -EPERM },
		{ 8, 0600, -EINVAL }, { 0, 0600, -EINVAL }, { 17, 0600, -EINVAL },
	};
	struct secret_dir d;
	char err[512];
	u8 buf[32];
	__u64 k[2];
	unsigned int i;

	if (!secret_dir_make(t, &d))
		return;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (!put_file(d.path, bad[i].size, bad[i].mode)) {
			CHECKF(t, 0, "writing %s", d.path);
			break;
		}
		err[0] = '\0';
		EXPECT_EQ(t, sxdp_secret_load(d.dir, k, err, sizeof(err)), bad[i].want);
		CHECKF(t, strstr(err, d.path) && strstr(err, "remove it"),
		       "case %u: message \"%s\"", i, err);
		EXPECT_EQ(t, file_bytes(d.path, buf, sizeof(buf)), bad[i].size);
		unlink(d.path);
	}
	/* A symlink to a good-looking file is not followed. */
	{
		char target[160];

		snprintf(target, sizeof(target), "%s/elsewhere", d.dir);
		if (put_file(target, 16, 0600) && !symlink(target, d.path)) {
			EXPECT_EQ(t, sxdp_secret_load(d.dir, k, err, sizeof(err)), -ELOOP);
			unlink(d.path);
		} else {
			CHECKF(t, 0, "making the symlink");
		}
	}
	/* A folder in its place. */
	if (!mkdir(d.path, 0700)) {
		EXPECT_EQ(t, sxdp_secret_load(d.dir, k, err, sizeof(err)), -EINVAL);
		rmdir(d.path);
	}
	/* Removed, as the message says: a new one is made. */
	EXPECT_EQ(t, sxdp_secret_load(d.dir, k, err, sizeof(err)), 0);
	secret_dir_clean(&d);
}

#define CASE(fn)	{ #fn, fn }

const struct sieve_test_case sieve_digest_cases[] = {
	CASE(sieve_unit_digest_model_vectors),
	CASE(sieve_unit_digest_siphash_vectors),
	CASE(sieve_unit_digest_matches_model),
	CASE(sieve_unit_digest_solved_collision),
	CASE(sieve_unit_digest_secret_made_once),
	CASE(sieve_unit_digest_secret_of_store),
	CASE(sieve_unit_digest_secret_race),
	CASE(sieve_unit_digest_secret_bad_files),
};

const unsigned int sieve_digest_cases_n = ARRAY_SIZE(sieve_digest_cases);
