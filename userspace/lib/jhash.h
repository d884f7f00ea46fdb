/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace port of the kernel's <linux/jhash.h> (Bob Jenkins' lookup3,
 * as modified by Jozsef Kadlecsik). It must stay bit-identical to the
 * kernel's: filters built in userspace are imported by the module, and a
 * VM test compares this port with values the real kernel computes.
 * Like the kernel's, the result depends on the CPU's endianness.
 */
#ifndef SIEVE_USER_JHASH_H
#define SIEVE_USER_JHASH_H

#include <stdint.h>
#include <string.h>

#define JHASH_INITVAL		0xdeadbeef

static inline uint32_t rol32(uint32_t word, unsigned int shift)
{
	return (word << (shift & 31)) | (word >> ((-shift) & 31));
}

static inline uint32_t __get_unaligned_cpu32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#define __jhash_mix(a, b, c)			\
{						\
	a -= c;  a ^= rol32(c, 4);  c += b;	\
	b -= a;  b ^= rol32(a, 6);  a += c;	\
	c -= b;  c ^= rol32(b, 8);  b += a;	\
	a -= c;  a ^= rol32(c, 16); c += b;	\
	b -= a;  b ^= rol32(a, 19); a += c;	\
	c -= b;  c ^= rol32(b, 4);  b += a;	\
}

#define __jhash_final(a, b, c)			\
{						\
	c ^= b; c -= rol32(b, 14);		\
	a ^= c; a -= rol32(c, 11);		\
	b ^= a; b -= rol32(a, 25);		\
	c ^= b; c -= rol32(b, 16);		\
	a ^= c; a -= rol32(c, 4);		\
	b ^= a; b -= rol32(a, 14);		\
	c ^= b; c -= rol32(b, 24);		\
}

static inline uint32_t jhash(const void *key, uint32_t length, uint32_t initval)
{
	uint32_t a, b, c;
	const uint8_t *k = key;

	a = b = c = JHASH_INITVAL + length + initval;

	while (length > 12) {
		a += __get_unaligned_cpu32(k);
		b += __get_unaligned_cpu32(k + 4);
		c += __get_unaligned_cpu32(k + 8);
		__jhash_mix(a, b, c);
		length -= 12;
		k += 12;
	}
	switch (length) {
	case 12: c += (uint32_t)k[11] << 24;	/* fallthrough */
	case 11: c += (uint32_t)k[10] << 16;	/* fallthrough */
	case 10: c += (uint32_t)k[9] << 8;	/* fallthrough */
	case 9:  c += k[8];			/* fallthrough */
	case 8:  b += (uint32_t)k[7] << 24;	/* fallthrough */
	case 7:  b += (uint32_t)k[6] << 16;	/* fallthrough */
	case 6:  b += (uint32_t)k[5] << 8;	/* fallthrough */
	case 5:  b += k[4];			/* fallthrough */
	case 4:  a += (uint32_t)k[3] << 24;	/* fallthrough */
	case 3:  a += (uint32_t)k[2] << 16;	/* fallthrough */
	case 2:  a += (uint32_t)k[1] << 8;	/* fallthrough */
	case 1:  a += k[0];
		 __jhash_final(a, b, c);
		 break;
	case 0:
		break;
	}
	return c;
}

#endif /* SIEVE_USER_JHASH_H */
